package lexical_test

import (
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/lexical"
)

// referPages have a comment box behind a button, three checkboxes, a task
// list that grows, and a list whose rows have their own Edit button; the
// title always says what the page last did.
var referPages = map[string]string{
	"/post": `<!doctype html><title>Post</title><article><h2>A post</h2><p>Words.</p>
<button onclick="document.getElementById('box').hidden = false">Comment</button>
<textarea id="box" aria-label="Comment" hidden oninput="document.title = 'comment ' + this.value"></textarea></article>`,
	"/fruit": `<!doctype html><title>Fruit</title><script>function said() { document.title = [...document.querySelectorAll('input')].map(b => b.checked ? 'x' : '-').join(''); }</script>
<label><input type="checkbox" onchange="said()"> Apple</label>
<label><input type="checkbox" onchange="said()" checked> Pear</label>
<label><input type="checkbox" onchange="said()" checked> Plum</label>
<button onclick="document.title = 'saved'">Save</button>`,
	"/tasks": `<!doctype html><title>Tasks</title><h1>Tasks</h1>
<input placeholder="New task" onkeydown="if (event.key === 'Enter') { add(this.value); this.value = ''; }">
<ul id="list"><li>Water the plants <button onclick="gone(this)">Delete</button></li></ul>
<label>First name <input></label> <label>Last name <input></label>
<script>function add(v) { const li = document.createElement('li'); li.textContent = v + ' ';
const b = document.createElement('button'); b.textContent = 'Delete'; b.onclick = () => gone(b); li.append(b);
document.getElementById('list').append(li); document.title = 'added ' + v; }
function gone(b) { document.title = 'deleted ' + b.parentElement.firstChild.textContent.trim(); b.parentElement.remove(); }</script>`,
}

// TestAPronounOrRecencyPhrasePointsAtWhatWasNamed: "write hi in it",
// "untick the third one" and "Delete the row you just created" stand for
// the one element or value the step, or the step before it, named; two
// candidates, an element named inside another, a plural, or nothing named
// at all go to the agent.
func TestAPronounOrRecencyPhrasePointsAtWhatWasNamed(t *testing.T) {
	srv, s, ctx := onPages(t, referPages)
	for _, c := range []struct {
		page  string
		steps []string // each split into its clauses, run in turn
		did   string   // the page's title at the end; "" when the last clause is the agent's
	}{
		{"/post", []string{"Open the comment box and write hi in it"}, "comment hi"},
		{"/post", []string{"Click Comment", "Type hello there into it"}, "comment hello there"},
		{"/fruit", []string{"Tick the first checkbox", "untick the third one"}, "xx-"},
		{"/fruit", []string{"Untick the second checkbox and then tick it again"}, "-xx"},
		{"/tasks", []string{"Create a task named Pay rent", "Delete the row you just created"}, "deleted Pay rent"},
		{"/tasks", []string{"Type Call mum into the new task field and press Enter", "Delete the task you just added"}, "deleted Call mum"},
		{"/tasks", []string{"Type Call mum into the new task field and press Enter, then delete the one you just added"}, "deleted Call mum"},
		// Two candidates, or none.
		{"/fruit", []string{"Tick Apple and untick Pear, then tick it"}, ""},
		{"/fruit", []string{"Click Save", "untick the third one"}, ""},
		{"/fruit", []string{"untick it"}, ""},
		{"/fruit", []string{"Tick the first checkbox", "Click Save", "untick the third one"}, ""},
		{"/fruit", []string{"Tick Apple and tick Plum", "untick them"}, ""},
		{"/tasks", []string{"Fill the first name with Ada and the last name with Lovelace", "Delete the row you just created"}, ""},
		{"/tasks", []string{"Delete the row you just created"}, ""},
		// "it" after a clause that used an element it did not name.
		{"/tasks", []string{`Fill the first name with Ada and add the item "Pay rent", then clear it`}, ""},
		{"/tasks", []string{`Click Delete in the row for "Water the plants"`, "then click it again"}, ""},
	} {
		t.Run(strings.Join(c.steps, " / "), func(t *testing.T) {
			if err := s.Navigate(ctx, srv.URL+c.page); err != nil {
				t.Fatal(err)
			}
			var ref lexical.Referent
			for i, step := range c.steps {
				clauses, err := lexical.Clauses(step)
				if err != nil {
					t.Fatal(err)
				}
				ref = ref.NextStep()
				for k, cl := range clauses {
					last := i == len(c.steps)-1 && k == len(clauses)-1
					res, err := lexical.Resolve(ctx, s, cl.Text, lexical.Options{Wait: time.Millisecond, Trail: cl.Trail, Before: &ref})
					if last && c.did == "" {
						if err == nil {
							t.Fatalf("%q resolved to %v, want the agent's", cl.Text, res.Commands)
						}
						return
					}
					if err != nil {
						t.Fatalf("%q: %v", cl.Text, err)
					}
					for _, cmd := range res.Commands {
						if out := s.Execute(ctx, cmd, browser.ExecOptions{}); out.Err != nil {
							t.Fatalf("%q: %+v: %v", cl.Text, cmd, out.Err)
						}
					}
					ref = ref.After(res.Intent)
				}
			}
			if got := s.Title(); got != c.did {
				t.Fatalf("the page says %q, want %q", got, c.did)
			}
		})
	}
}
