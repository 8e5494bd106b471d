module.exports = [
  { name: 'Oat milk', expected: 2 },
  { name: 'Rice', expected: 2 },
  { name: 'Lemons', expected: 2 },
];
