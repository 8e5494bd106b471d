package suitetest

import (
	"fmt"
	"strings"
)

// Scale is the shape of a generated project: Tests tests over Files test
// files against the demo app's list page, of which the tests of
// DriftFiles files act through a page object whose locators the demo
// app's renamed_ids variant breaks (drift, healed in the page object), and
// the tests of RegressionFiles files check the item count its wrong_count
// variant breaks (a regression, never healed). Every other test passes
// under both.
type Scale struct {
	Tests, Files                int
	DriftFiles, RegressionFiles int
}

// Kind of a generated file.
const (
	scaledStable     = "stable"
	scaledDrift      = "drift"
	scaledRegression = "regression"
)

// Scaled writes the project of s, its files in four of the corpus's
// styles in turn: a page object with a beforeEach hook, a fixture made
// with test.extend, a data table looped into tests, and steps written
// inline in a describe block. It answers the files and, per test file,
// whether its tests drift, regress or pass ("drift", "regression",
// "stable").
func Scaled(s Scale) (map[string][]byte, map[string]string) {
	files := map[string][]byte{
		"package.json": []byte(`{ "name": "scaled-shop", "private": true, "devDependencies": { "@playwright/test": "^1.52.0" } }` + "\n"),
		"playwright.config.js": []byte(`// @ts-check
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
  testDir: './tests',
  timeout: 20_000,
  expect: { timeout: 2_000 },
  fullyParallel: true,
  retries: process.env.CI ? 2 : 0,
  workers: 2,
  reporter: 'list',
  use: { baseURL: process.env.BASE_URL ?? 'http://localhost:3000', actionTimeout: 3_000, trace: 'retain-on-failure' },
});
`),
		// The page object every stable file uses: roles and names.
		"pages/list-page.js": []byte(`const { expect } = require('@playwright/test');

class ListPage {
  constructor(page) {
    this.page = page;
    this.newItem = page.getByRole('textbox', { name: 'New item' });
    this.add = page.getByRole('button', { name: 'Add', exact: true });
    this.items = page.locator('#items li');
  }

  async open() {
    await this.page.goto('/list');
    await expect(this.newItem).toBeVisible();
  }

  async addItem(name) {
    await this.newItem.fill(name);
    await this.add.click();
    await expect(this.items.last()).toContainText(name);
  }
}

module.exports = { ListPage };
`),
		// The older page object the drifting files use: ids and test ids.
		"pages/legacy-list.js": []byte(`const { expect } = require('@playwright/test');

exports.LegacyList = class LegacyList {
  constructor(page) {
    this.page = page;
    this.input = page.locator('#item');
    this.submit = page.getByTestId('add-button');
    this.rows = page.locator('#items li');
  }

  async open() {
    await this.page.goto('/list');
  }

  async add(name) {
    await this.input.fill(name);
    await this.submit.click();
  }

  async expectLast(name) {
    await expect(this.rows.last()).toHaveText(new RegExp(name));
  }
};
`),
		"data/items.json": []byte(`["Tea", "Coffee", "Rice", "Beans", "Apples", "Pears", "Milk", "Bread", "Salt", "Honey", "Oats", "Lentils"]` + "\n"),
	}
	kinds := map[string]string{}
	per, extra := s.Tests/s.Files, s.Tests%s.Files
	for i := range s.Files {
		n := per
		if i < extra {
			n++
		}
		// The failing files are spread through the project, every
		// stride-th from the third.
		kind := scaledStable
		stride := max((s.Files-2)/max(s.DriftFiles+s.RegressionFiles, 1), 1)
		switch at := (i - 2) / stride; {
		case i >= 2 && (i-2)%stride == 0 && at < s.DriftFiles:
			kind = scaledDrift
		case i >= 2 && (i-2)%stride == 0 && at < s.DriftFiles+s.RegressionFiles:
			kind = scaledRegression
		}
		area := scaledAreas[i%len(scaledAreas)]
		path := fmt.Sprintf("tests/%s-%02d.spec.js", area, i)
		files[path] = []byte(scaledFile(i, n, kind, area))
		kinds[path] = kind
	}
	return files, kinds
}

// scaledAreas name the generated files as a shop's suite names its own.
var scaledAreas = []string{"pantry", "checkout", "basket", "favourites", "weekly", "party", "bulk", "samples"}

// scaledFile is one test file of n tests of its kind, in style i%4.
func scaledFile(i, n int, kind, area string) string {
	var b strings.Builder
	item := func(k int) string { return fmt.Sprintf("%s item %d-%d", area, i, k) }
	switch {
	case kind == scaledDrift:
		fmt.Fprintf(&b, "const { test } = require('@playwright/test');\nconst { LegacyList } = require('../pages/legacy-list');\n\n")
		fmt.Fprintf(&b, "test.describe('%s (legacy screens)', () => {\n  let list;\n\n  test.beforeEach(async ({ page }) => {\n    list = new LegacyList(page);\n    await list.open();\n  });\n", area)
		for k := range n {
			fmt.Fprintf(&b, "\n  test('keeps %s', async () => {\n    await list.add('%s');\n    await list.expectLast('%s');\n  });\n", item(k), item(k), item(k))
		}
		b.WriteString("});\n")
	case kind == scaledRegression:
		fmt.Fprintf(&b, "const { test, expect } = require('@playwright/test');\nconst { ListPage } = require('../pages/list-page');\n\n")
		fmt.Fprintf(&b, "const counts = [\n")
		for k := range n {
			fmt.Fprintf(&b, "  { add: '%s', says: '2 items' },\n", item(k))
		}
		b.WriteString("];\n\nfor (const row of counts) {\n  test(`counts ${row.add}`, async ({ page }) => {\n    const list = new ListPage(page);\n    await list.open();\n    await list.addItem(row.add);\n    await expect(page.getByText(/^\\d+ items?$/)).toHaveText(row.says);\n  });\n}\n")
	case i%4 == 0:
		fmt.Fprintf(&b, "const { test } = require('@playwright/test');\nconst { ListPage } = require('../pages/list-page');\n\n")
		fmt.Fprintf(&b, "test.describe('%s %d', () => {\n  /** @type {ListPage} */\n  let list;\n\n  test.beforeEach(async ({ page }) => {\n    list = new ListPage(page);\n    await list.open();\n  });\n", area, i)
		for k := range n {
			fmt.Fprintf(&b, "\n  test('adds %s', async () => {\n    await list.addItem('%s');\n  });\n", item(k), item(k))
		}
		b.WriteString("});\n")
	case i%4 == 1:
		fmt.Fprintf(&b, "const base = require('@playwright/test');\nconst { ListPage } = require('../pages/list-page');\n\n")
		b.WriteString("const test = base.test.extend({\n  list: async ({ page }, use) => {\n    const list = new ListPage(page);\n    await list.open();\n    await use(list);\n  },\n});\nconst { expect } = base;\n")
		for k := range n {
			fmt.Fprintf(&b, "\ntest('%s: the new entry is last', async ({ list }) => {\n  await list.addItem('%s');\n  await expect(list.items).not.toHaveCount(0);\n});\n", item(k), item(k))
		}
	case i%4 == 2:
		fmt.Fprintf(&b, "const { test, expect } = require('@playwright/test');\nconst items = require('../data/items.json');\n\n")
		fmt.Fprintf(&b, "const picks = items.slice(0, %d).map((name, k) => ({ name: `${name} %d-${k}`, k }));\n\n", n, i)
		b.WriteString("for (const { name, k } of picks) {\n  test(`" + area + " row ${k}: ${name}`, async ({ page }) => {\n    await page.goto('/list');\n" +
			"    await page.getByRole('textbox', { name: 'New item' }).fill(name);\n    await page.getByRole('textbox', { name: 'New item' }).press('Enter');\n" +
			"    await expect(page.locator('#items li').filter({ hasText: name })).toHaveCount(1);\n  });\n}\n")
	default:
		fmt.Fprintf(&b, "const { test, expect } = require('@playwright/test');\n\ntest.describe('%s %d', () => {\n", area, i)
		for k := range n {
			fmt.Fprintf(&b, "  test('lists %s', async ({ page }) => {\n    await test.step('open the list', async () => {\n      await page.goto('/list');\n    });\n"+
				"    await test.step('add it', async () => {\n      await page.getByRole('textbox', { name: 'New item' }).fill('%s');\n      await page.getByRole('button', { name: 'Add', exact: true }).click();\n    });\n"+
				"    await expect(page.getByRole('listitem').filter({ hasText: '%s' })).toBeVisible();\n  });\n\n", item(k), item(k), item(k))
		}
		b.WriteString("});\n")
	}
	return b.String()
}
