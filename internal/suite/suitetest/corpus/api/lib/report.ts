export interface Report {
  title: string;
  rows: { region: string; revenue: number }[];
}

export const total = (r: Report): number => r.rows.reduce((sum, row) => sum + row.revenue, 0);
