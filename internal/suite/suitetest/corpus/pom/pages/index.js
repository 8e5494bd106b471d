const { LoginPage } = require('./LoginPage');
const { ListPage } = require('./ListPage');

/** One place to get every page object from a test. */
class PageManager {
  constructor(page) {
    this.page = page;
    this.loginPage = new LoginPage(page);
    this.listPage = new ListPage(page);
  }
}

module.exports = { PageManager };
