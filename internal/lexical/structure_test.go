package lexical_test

import "testing"

// structurePages: a library page whose list items each have a Renew
// button, a button named like a sentence, a dropdown, one form, a consent
// box and a table; and pages that almost have that structure.
var structurePages = map[string]string{
	"/library": `<!doctype html><title>Library</title><script>function did(w) { document.title = w; }</script>
<ul><li>Atlas of Stars <button onclick="did('renewed Atlas of Stars')">Renew</button></li>
<li>Bread by Hand <button onclick="did('renewed Bread by Hand')">Renew</button></li></ul>
<button onclick="did('cleared')">Clear all filters</button>
<button aria-label="Save Garden Suites to favourites" onclick="did('saved')">♡</button>
<label>Rooms <select onchange="did('rooms ' + this.value)"><option>1 room</option><option>2 rooms</option></select></label>
<form onsubmit="event.preventDefault(); did('sent')"><label>Name <input></label> <button>Send it</button></form>
<label><input type="checkbox" onchange="did('agreed')"> I agree to the privacy notice</label>
<table><thead><tr><th>Title</th><th>Year</th><th>Status</th></tr></thead>
<tbody><tr><td>Winter Orchard</td><td>2022</td><td>Checked out</td></tr><tr><td>Salt Tides</td><td>2019</td><td>Available</td></tr></tbody></table>`,
	"/almost": `<!doctype html><title>Almost</title>
<ul><li>Atlas of Stars <button>Renew</button></li><li>Atlas of Seas <button>Renew</button></li></ul>
<p>Bread by Hand <button>Pay</button></p>
<button>Clear all filters</button> <button>Clear all filters</button>
<label>Rooms <select><option>1 room</option><option>2 rooms</option></select></label>
<label>Extra rooms <select><option>2 rooms</option></select></label>
<form><label>Name <input></label> <button>Send it</button></form> <form><label>Note <input></label> <button>Post</button></form>
<button>I agree to the privacy notice</button>
<table><thead><tr><th>Title</th><th>Status</th></tr></thead>
<tbody><tr><td>Winter Orchard</td><td>Checked out</td></tr><tr><td>Orchard Notes</td><td>Available</td></tr></tbody></table>`,
}

// TestAControlIsReadByThePagesStructure: sentences no rule reads, or read
// to nothing on the page, are taken by the page's structure when exactly
// one control answers: a control's whole name ("Clear all filters"), the
// control each item has named by the verb ("Renew Atlas of Stars"), the
// one form's submit button, the one dropdown offering the option, the box
// that says "I agree", a table's cell by column and row, and a value of
// several words the element shows. Where two answer, or the page only
// almost has the structure, the step is the agent's.
func TestAControlIsReadByThePagesStructure(t *testing.T) {
	srv, s, ctx := onPages(t, structurePages)
	for _, c := range []struct {
		page, step string
		did        string // the page's title once the commands ran; "" the agent's
	}{
		{"/library", "Renew Atlas of Stars", "renewed Atlas of Stars"},
		{"/library", "Renew Bread by Hand", "renewed Bread by Hand"},
		{"/library", "Clear all filters", "cleared"},
		{"/library", "Save Garden Suites to my favourites", "saved"},
		{"/library", "Select 2 rooms", "rooms 2 rooms"},
		{"/library", "Submit the form", "sent"},
		{"/library", "Agree to the privacy notice", "agreed"},
		{"/library", "Verify the status of Winter Orchard is Checked out", "Library"},
		{"/library", "Verify the year of Salt Tides is 2019", "Library"},
		{"/almost", "Renew Atlas", ""},
		{"/almost", "Pay Bread by Hand", ""},
		{"/almost", "Renew Bread by Hand", ""},
		{"/almost", "Clear all filters", ""},
		{"/almost", "Select 2 rooms", ""},
		{"/almost", "Submit the form", ""},
		{"/almost", "Agree to the privacy notice", ""},
		{"/almost", "Verify the status of Orchard is Available", ""},
		{"/almost", "Verify the status of Orchard is Checked out", ""},
		{"/library", "Verify the status of Winter Orchard is On hold", ""},
	} {
		t.Run(c.page+" "+c.step, func(t *testing.T) {
			resolveAndRun(t, ctx, s, srv.URL+c.page, c.step, "", c.did)
		})
	}
}
