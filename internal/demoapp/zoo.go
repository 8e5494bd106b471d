package demoapp

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"text/template"
	"time"
)

// The zoo (/zoo/) is the demo app's multi-page site: 35 page templates in
// the shapes real sites have (lists of examples, forms, widgets, detail
// pages by id, pages behind a login), holding seeded defects of every
// kind an exploration reports, behind a switch that turns them all off
// (the bug-free twin). Its noise is the same in both: a third-party
// script the egress guard refuses, content that changes on every load,
// and a page that asks for HTTP authentication.

// ZooDefect is one seeded defect of the zoo: where it is, what it is, and
// what a tester's report of it says (a fragment of the finding's title).
type ZooDefect struct {
	Page string
	What string
	// Detector is the finding type that reports it ("functional" needs
	// the model's judgement).
	Detector string
	Title    string
}

// ZooDefects are the zoo's seeded defects, each absent from the twin.
var ZooDefects = []ZooDefect{
	{"/zoo/widgets", "throws a TypeError while loading", "page_error", "reading 'render'"},
	{"/zoo/search", "rejects a promise nobody handles while loading", "page_error", "search index failed to load"},
	{"/zoo/faq", "logs an error to the console while loading", "console_error", "FAQ data is malformed"},
	{"/zoo/gallery", "shows an image that answers 404", "failed_request", "GET /zoo/img/sunset-missing.svg answered 404"},
	{"/zoo/typography", "links a stylesheet that answers 404", "failed_request", "GET /zoo/css/typography-v2.css answered 404"},
	{"/zoo/careers", "loads a script that answers 500", "failed_request", "GET /zoo/js/careers.js answered 500"},
	{"/zoo/reports", "asks for its data from an endpoint that answers 500", "failed_request", "GET /zoo/api/report-data answered 500"},
	{"/zoo/links", "links to a page that answers 404", "broken_link", "/zoo/old-pricing"},
	{"/zoo/status", "links to a page that answers 500", "broken_link", "/zoo/maintenance"},
	{"/zoo/downloads", "links to a file that answers 404", "broken_link", "/zoo/files/price-list-2023.txt"},
	{"/zoo/shipping", "asks a delivery estimate from an endpoint that takes 1.5 s", "slow_response", "GET /zoo/api/estimate"},
	{"/zoo/notifications", `"Mark all as read" does nothing`, "dead_click", `"Mark all as read"`},
	{"/zoo/newsletter", "has an email field without a label", "accessibility", "(label,"},
	{"/zoo/team", "shows a photo without alternative text", "accessibility", "(image-alt,"},
	{"every page", "prints its footer in grey too light to read", "accessibility", "(color-contrast,"},
	{"/zoo/invoice", "shows a total that is not the sum of its lines", "functional", "total"},
	{"/zoo/contact", "empties the message when the email is missing", "functional", "message"},
	{"/zoo/about", `has a typo ("missoin")`, "functional", "typo"},
}

// ZooSlowDelay is how long the slow endpoint takes while the bugs are on.
const ZooSlowDelay = 1500 * time.Millisecond

// ZooAuth is the user and password of the zoo's page behind HTTP
// authentication (/zoo/admin).
const ZooAuth = "admin:zoo-keeper"

// zooPage is one page template of the zoo.
type zooPage struct {
	path, title, body string
}

// zooPages are the zoo's pages; paths with {id} are one template each.
var zooPages = []zooPage{
	{"/zoo/{$}", "Examples", `<p>A small site with one page per example. Pick one:</p>
<ul id="examples">{{range .Examples}}<li><a href="{{.Path}}">{{.Title}}</a></li>{{end}}</ul>`},
	{"/zoo/about", "About us", `<p id="mission">Our {{if .Bugs}}missoin{{else}}mission{{end}} is to make the web a calmer place.</p>
<p>We are a team of six, working from three cities since 2019.</p>`},
	{"/zoo/contact", "Contact", `<form id="contact" novalidate>
<p><label for="name">Name</label> <input id="name" name="name"></p>
<p><label for="email">Email</label> <input id="email" name="email" type="email"></p>
<p><label for="message">Message</label> <textarea id="message" name="message"></textarea></p>
<button type="submit">Send message</button></form>
<p id="contact-status" role="status"></p>
<script>
document.getElementById('contact').addEventListener('submit', (e) => {
  e.preventDefault();
  const status = document.getElementById('contact-status');
  if (!document.getElementById('email').value.includes('@')) {
    status.textContent = 'Please enter a valid email address.';
    {{if .Bugs}}document.getElementById('message').value = '';{{end}}
    return;
  }
  status.textContent = 'Thanks, we will reply soon.';
});
</script>`},
	{"/zoo/invoice", "Invoice", `<table><caption>Invoice 1042</caption>
<thead><tr><th scope="col">Item</th><th scope="col">Qty</th><th scope="col">Price</th><th scope="col">Amount</th></tr></thead>
<tbody><tr><td>Notebook</td><td>2</td><td>$3.50</td><td>$7.00</td></tr><tr><td>Pen set</td><td>1</td><td>$4.00</td><td>$4.00</td></tr></tbody></table>
<p>Total: <output id="total">{{if .Bugs}}$10.50{{else}}$11.00{{end}}</output></p>`},
	{"/zoo/widgets", "Widgets", `<p>The widgets load below.</p><p id="widgets">Loading…</p>
<script>{{if .Bugs}}const config = window.widgetConfig; config.render();{{else}}document.getElementById('widgets').textContent = 'Widgets ready.';{{end}}</script>`},
	{"/zoo/search", "Search", `<form id="search" role="search"><label for="q">Search the site</label> <input id="q" type="search"> <button type="submit">Search</button></form>
<p id="results" role="status"></p>
<script>
{{if .Bugs}}Promise.reject(new Error('search index failed to load'));{{end}}
document.getElementById('search').addEventListener('submit', (e) => { e.preventDefault();
  document.getElementById('results').textContent = 'No results for “' + document.getElementById('q').value + '”.'; });
</script>`},
	{"/zoo/faq", "Questions", `<details><summary>How do I reset my password?</summary><p>Use the link on the sign-in page.</p></details>
<details><summary>Can I change my plan?</summary><p>Yes, at any time.</p></details>
<script>{{if .Bugs}}console.error('FAQ data is malformed: expected an array');{{end}}</script>`},
	{"/zoo/gallery", "Gallery", `<p><img src="/zoo/img/lake.svg" alt="A lake at dawn"> <img src="/zoo/img/forest.svg" alt="A forest path">
<img src="/zoo/img/{{if .Bugs}}sunset-missing{{else}}sunset{{end}}.svg" alt="A sunset over the bay"></p>`},
	{"/zoo/typography", "Typography", `<link rel="stylesheet" href="/zoo/css/{{if .Bugs}}typography-v2{{else}}typography{{end}}.css">
<p class="lead">Headings, paragraphs and lists in the house style.</p><ul><li>One</li><li>Two</li></ul>`},
	{"/zoo/careers", "Careers", `<p>Open positions:</p><ul id="jobs"><li>Support engineer</li></ul><script src="/zoo/js/careers.js"></script>`},
	{"/zoo/reports", "Reports", `<p id="report" role="status">Loading the report…</p>
<script>
fetch('/zoo/api/report-data').then(r => r.ok ? r.json() : null).then(d => {
  document.getElementById('report').textContent = d ? 'Revenue this month: ' + d.revenue : 'The report is unavailable.'; });
</script>`},
	{"/zoo/links", "Useful links", `<ul><li><a href="/zoo/{{if .Bugs}}old-pricing{{else}}pricing{{end}}">Our prices</a></li>
<li><a href="/zoo/blog/2">The latest article</a></li><li><a href="/zoo/products?page=2">More products</a></li></ul>`},
	{"/zoo/status", "Service status", `<p>All systems are working.</p><p><a href="/zoo/maintenance">Maintenance notes</a></p>`},
	{"/zoo/downloads", "Downloads", `<p><a href="/zoo/files/{{if .Bugs}}price-list-2023{{else}}price-list{{end}}.txt">Price list (text)</a></p>`},
	{"/zoo/shipping", "Shipping", `<p><label for="country">Country</label> <select id="country"><option>Germany</option><option>France</option><option>Spain</option></select></p>
<button id="estimate" type="button">Estimate delivery</button><p id="eta" role="status"></p>
<script>
document.getElementById('estimate').addEventListener('click', async () => {
  const r = await fetch('/zoo/api/estimate?country=' + encodeURIComponent(document.getElementById('country').value));
  const d = await r.json(); document.getElementById('eta').textContent = 'Delivery in ' + d.days + ' days.'; });
</script>`},
	{"/zoo/notifications", "Notifications", `<ul id="notes"><li>Your order shipped.</li><li>A new article is out.</li></ul>
<button id="read" type="button">Mark all as read</button><p id="read-status" role="status"></p>
<script>
{{if not .Bugs}}document.getElementById('read').addEventListener('click', () => {
  document.getElementById('notes').replaceChildren(); document.getElementById('read-status').textContent = 'All caught up.'; });{{end}}
</script>`},
	{"/zoo/newsletter", "Newsletter", `<form id="letter" novalidate><p>Get our monthly letter.</p>
<p><input id="letter-email" type="email" {{if not .Bugs}}aria-label="Email address"{{end}}> <button type="submit">Subscribe</button></p></form>
<p id="letter-status" role="status"></p>
<script>document.getElementById('letter').addEventListener('submit', (e) => { e.preventDefault();
  document.getElementById('letter-status').textContent = 'Thanks for subscribing.'; });</script>`},
	{"/zoo/team", "Our team", `<p><img src="/zoo/img/team.svg" {{if not .Bugs}}alt="The team at the 2024 retreat"{{end}}></p><p>Six people, one office dog.</p>`},
	{"/zoo/products", "Products", `<ul>{{range .Products}}<li><a href="/zoo/products/{{.ID}}">{{.Name}}</a></li>{{end}}</ul>
<p><a href="/zoo/products?page=2">Next page</a></p>`},
	{"/zoo/products/{id}", "Product", `<p>Product number {{.ID}}, in stock.</p><button id="wish" type="button">Add to wishlist</button><p id="wish-status" role="status"></p>
<script>document.getElementById('wish').addEventListener('click', () => { document.getElementById('wish-status').textContent = 'Added to your wishlist.'; });</script>`},
	{"/zoo/blog", "Blog", `<ul><li><a href="/zoo/blog/1">Why we test in production too</a></li><li><a href="/zoo/blog/2">A calmer release process</a></li></ul>`},
	{"/zoo/blog/{id}", "Article", `<p>Article {{.ID}}: a few thoughts on shipping small changes often.</p>
<button id="like" type="button">Like</button> <span id="likes" role="status">0 likes</span>
<script>let likes = 0; document.getElementById('like').addEventListener('click', () => { likes++; document.getElementById('likes').textContent = likes + ' likes'; });</script>`},
	{"/zoo/tabs", "Tabs", `<div role="tablist" aria-label="Plans">
<button role="tab" id="t1" aria-selected="true" aria-controls="p1">Basic</button><button role="tab" id="t2" aria-selected="false" aria-controls="p2">Team</button></div>
<div role="tabpanel" id="p1" aria-labelledby="t1"><p>One user, five projects.</p></div><div role="tabpanel" id="p2" aria-labelledby="t2" hidden><p>Ten users, unlimited projects.</p></div>
<script>for (const t of document.querySelectorAll('[role=tab]')) t.addEventListener('click', () => {
  for (const u of document.querySelectorAll('[role=tab]')) { const on = u === t; u.setAttribute('aria-selected', on); document.getElementById(u.getAttribute('aria-controls')).hidden = !on; } });</script>`},
	{"/zoo/modal", "Terms", `<button id="open" type="button">Read the terms</button>
<dialog id="terms" aria-labelledby="terms-title"><h2 id="terms-title">Terms of use</h2><p>Be kind.</p><button id="close" type="button">Close</button></dialog>
<script>const d = document.getElementById('terms'); document.getElementById('open').addEventListener('click', () => d.showModal());
document.getElementById('close').addEventListener('click', () => d.close());</script>`},
	{"/zoo/checkboxes", "Preferences", `<p><input type="checkbox" id="c1"> <label for="c1">Send me product news</label></p>
<p><input type="checkbox" id="c2" checked> <label for="c2">Remember this device</label></p>`},
	{"/zoo/dropdown", "Dropdown", `<p><label for="size">Size</label> <select id="size"><option>Small</option><option>Medium</option><option>Large</option></select></p>
<p id="size-status" role="status">Size: Small</p>
<script>document.getElementById('size').addEventListener('change', (e) => { document.getElementById('size-status').textContent = 'Size: ' + e.target.value; });</script>`},
	{"/zoo/dynamic", "Dynamic loading", `<button id="start" type="button">Start</button><p id="finish" role="status"></p>
<script>document.getElementById('start').addEventListener('click', () => { document.getElementById('finish').textContent = 'Loading…';
  setTimeout(() => { document.getElementById('finish').textContent = 'Hello World!'; }, 800); });</script>`},
	{"/zoo/table", "Price table", `<table><caption>Plans</caption><thead><tr><th scope="col"><button id="by-name" type="button">Plan</button></th><th scope="col"><button id="by-price" type="button">Price</button></th></tr></thead>
<tbody id="rows"><tr><td>Team</td><td>$20</td></tr><tr><td>Basic</td><td>$5</td></tr><tr><td>Business</td><td>$50</td></tr></tbody></table>
<script>const sort = (i, num) => { const rows = [...document.getElementById('rows').children];
  rows.sort((a, b) => { const x = a.children[i].textContent, y = b.children[i].textContent; return num ? parseFloat(x.slice(1)) - parseFloat(y.slice(1)) : x.localeCompare(y); });
  document.getElementById('rows').replaceChildren(...rows); };
document.getElementById('by-name').addEventListener('click', () => sort(0, false)); document.getElementById('by-price').addEventListener('click', () => sort(1, true));</script>`},
	{"/zoo/settings", "Settings", `<form id="settings" novalidate><p><input type="checkbox" id="mail"> <label for="mail">Email notifications</label></p>
<p><label for="theme">Theme</label> <select id="theme"><option>Light</option><option>Dark</option></select></p>
<button type="submit">Save settings</button></form><p id="settings-status" role="status"></p>
<script>document.getElementById('settings').addEventListener('submit', (e) => { e.preventDefault(); document.getElementById('settings-status').textContent = 'Settings saved.'; });</script>`},
	{"/zoo/login", "Sign in", `<form id="signin" novalidate><p><label for="user">Username</label> <input id="user"></p>
<p><label for="pass">Password</label> <input id="pass" type="password"></p><button type="submit">Sign in</button></form><p id="signin-status" role="status"></p>
<script>document.getElementById('signin').addEventListener('submit', (e) => { e.preventDefault();
  document.getElementById('signin-status').textContent = 'Invalid username or password.'; });</script>`},
	{"/zoo/quote", "Quote of the day", `<blockquote><p>{{.Quote}}</p></blockquote><p><a href="/zoo/quote">Another one</a></p>`},
	{"/zoo/pricing", "Pricing", `<p>{{.Visitors}} people are looking at this page.</p><p id="price">Basic: $5 a month</p>
<button id="yearly" type="button">Show yearly prices</button>
<script>document.getElementById('yearly').addEventListener('click', () => { document.getElementById('price').textContent = 'Basic: $50 a year'; });</script>`},
	{"/zoo/maintenance", "Maintenance notes", `<p>The next maintenance window is on Sunday at 02:00.</p>`},
	{"/zoo/privacy", "Privacy", `<p>We keep what you send us for as long as your account is open.</p>`},
	{"/zoo/admin", "Administration", `<p>Signed in as the administrator.</p>`},
}

var zooLayout = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Example zoo</title><link rel="icon" href="data:,">
<style>body{font-family:system-ui,sans-serif;color:#111;background:#fff;margin:2em}button{color:#fff;background:#0b5394;border:0;padding:.3em .7em;margin:.2em}a{color:#0b5394}
li{margin:.3em 0}img{width:48px;height:32px}table{border-collapse:collapse}td,th{padding:.2em .6em;text-align:left}footer .fine{color:{{if .Bugs}}#c4c4c4{{else}}#555{{end}}}</style>
<script async src="https://analytics.zoo-tracker.example/tag.js"></script></head>
<body><header><p><strong>Example zoo</strong></p><nav aria-label="Main"><a href="/zoo/">Home</a> · <a href="/zoo/products">Products</a> · <a href="/zoo/blog">Blog</a> · <a href="/zoo/about">About</a> · <a href="/zoo/contact">Contact</a></nav></header>
<main><h1>{{.Title}}</h1>
{{template "body" .}}
</main>
<footer><p class="fine">© 2026 Example zoo · <a href="/zoo/privacy">Privacy</a></p></footer>
</body></html>`

// zooTemplates are the pages parsed with the layout, by path.
var zooTemplates = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, p := range zooPages {
		t := template.Must(template.New("layout").Parse(zooLayout))
		template.Must(t.New("body").Parse(p.body))
		out[p.path] = t
	}
	return out
}()

// ZooTemplates is how many page templates the zoo has (a page per id is
// one template).
func ZooTemplates() int { return len(zooPages) }

// ZooPages are the paths of one page of each template, the home page first.
func ZooPages() []string {
	out := []string{"/zoo/"}
	for _, l := range zooExamples() {
		out = append(out, l.Path)
	}
	return out
}

// SetZooBugs turns the zoo's seeded defects on (the default) or off.
func (a *App) SetZooBugs(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.zooFixed = !on
}

func (a *App) zooBugs() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.zooFixed
}

var zooQuotes = []string{"Simplicity is prerequisite for reliability.", "Make it work, make it right, make it fast.",
	"The best way to predict the future is to invent it.", "Programs must be written for people to read."}

type zooLink struct{ Path, Title string }

// zooExamples are the home page's links: every page but the home page,
// with one id each for the detail pages.
func zooExamples() []zooLink {
	var out []zooLink
	for _, p := range zooPages[1:] {
		out = append(out, zooLink{strings.ReplaceAll(p.path, "{id}", "1"), p.title})
	}
	return out
}

func (a *App) zooRoutes(mux *http.ServeMux) {
	for _, p := range zooPages {
		tmpl := zooTemplates[p.path]
		title := p.title
		handler := func(w http.ResponseWriter, r *http.Request) {
			data := map[string]any{"Bugs": a.zooBugs(), "Title": title, "ID": r.PathValue("id"), "Examples": zooExamples(),
				"Products": []map[string]any{{"ID": 1, "Name": "Desk lamp"}, {"ID": 2, "Name": "Notebook"}, {"ID": 3, "Name": "Pen set"}},
				"Quote":    zooQuotes[rand.IntN(len(zooQuotes))], "Visitors": 2 + rand.IntN(40)}
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, data); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(buf.Bytes())
		}
		switch p.path {
		case "/zoo/admin":
			handler = zooBasicAuth(handler)
		case "/zoo/maintenance":
			next := handler
			handler = func(w http.ResponseWriter, r *http.Request) {
				if a.zooBugs() {
					http.Error(w, "maintenance notes unavailable", http.StatusInternalServerError)
					return
				}
				next(w, r)
			}
		}
		mux.HandleFunc("GET "+p.path, handler)
	}
	mux.HandleFunc("GET /zoo/img/{name}", func(w http.ResponseWriter, r *http.Request) {
		colors := map[string]string{"lake.svg": "#2e86c1", "forest.svg": "#1e8449", "sunset.svg": "#ca6f1e", "team.svg": "#7d3c98"}
		c, ok := colors[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="48" height="32"><rect width="48" height="32" fill="%s"/></svg>`, c)
	})
	mux.HandleFunc("GET /zoo/css/typography.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte(".lead{font-size:1.2em}"))
	})
	mux.HandleFunc("GET /zoo/js/careers.js", func(w http.ResponseWriter, r *http.Request) {
		if a.zooBugs() {
			http.Error(w, "build failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(`document.getElementById('jobs').insertAdjacentHTML('beforeend', '<li>Frontend developer</li>');`))
	})
	mux.HandleFunc("GET /zoo/api/report-data", func(w http.ResponseWriter, r *http.Request) {
		if a.zooBugs() {
			http.Error(w, "report service unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"revenue":"$12,400"}`))
	})
	mux.HandleFunc("GET /zoo/api/estimate", func(w http.ResponseWriter, r *http.Request) {
		if a.zooBugs() {
			select {
			case <-time.After(ZooSlowDelay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"days":3}`))
	})
	mux.HandleFunc("GET /zoo/files/price-list.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Basic: $5 a month\nTeam: $20 a month\n"))
	})
}

// zooBasicAuth asks for HTTP authentication (ZooAuth).
func zooBasicAuth(next http.HandlerFunc) http.HandlerFunc {
	user, pass, _ := strings.Cut(ZooAuth, ":")
	return func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="zoo admin"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		next(w, r)
	}
}
