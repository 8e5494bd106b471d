package browsertest

import "testing"

func TestUntimedTakesOutOnlyTheTimeouts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"await page.getByRole('button').click({ timeout: 13000 });", "await page.getByRole('button').click();"},
		{"await expect(page.getByText('Cart')).toContainText('1 item', { timeout: 12000 });", "await expect(page.getByText('Cart')).toContainText('1 item');"},
		{"await page.locator('#a').click({ button: 'right', timeout: 9000 });", "await page.locator('#a').click({ button: 'right' });"},
		{"await page.locator('#a').fill('x');", "await page.locator('#a').fill('x');"},
		{"await page.waitForTimeout(700); // { timeout: 1 } in a comment", "await page.waitForTimeout(700); // { timeout: 1 } in a comment"},
	} {
		if got := Untimed(tc.in); got != tc.want {
			t.Errorf("Untimed(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
