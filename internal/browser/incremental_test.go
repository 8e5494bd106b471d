package browser_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// TestTypingPatchesTheRepresentationAsAFreshReadWouldShowIt: after typing,
// the representation is patched instead of read again only where nothing
// but the typing changed, and a patched one is exactly what a fresh read
// shows (the values, their quoting, the focus, every other line); a page
// where typing changes more (its DOM, another field's value, a style that
// depends on the value or the focus, a shadow tree, the focus moving on)
// is read afresh.
func TestTypingPatchesTheRepresentationAsAFreshReadWouldShowIt(t *testing.T) {
	t.Parallel()
	base := browsertest.Serve(t, "testdata")
	type fill struct{ label, value string }
	for _, tc := range []struct {
		page    string
		batches [][]fill // each batch is followed by a representation
		patched bool
	}{
		{"typing.html", [][]fill{
			{{"Full name", "Ada Lovelace"}},
			{{"Full name", `Ada "the Countess" Lovelace`}},
			{{"Email", "ada@example.com"}, {"Notes", "  leave   at the door  "}},
			{{"Quantity", "42"}},
			{{"Notes", "yes"}, {"Full name", "-5"}},
			{{"Full name", "a: b"}, {"Email", "#tag"}},
			{{"Full name", "x #y"}, {"Notes", "0x1F"}},
			{{"Full name", "Infinity"}, {"Notes", `back\slash`}},
			{{"Full name", "Full name"}},
			{{"Find a product", "Product 7"}},
			{{"Full name", ""}, {"Notes", "[draft] {x}"}},
			// As the model names fields: by the representation's refs.
			{{"ref textbox Email", "grace@example.com"}, {"ref textbox Notes", "ring twice"}},
		}, true},
		{"typing-counter.html", [][]fill{{{"Message", "Hello"}}}, false},
		{"typing-mirror.html", [][]fill{{{"Billing city", "Lyon"}}}, false},
		{"typing-invalid.html", [][]fill{{{"Email address", "not an address"}}}, false},
		{"typing-next.html", [][]fill{{{"Digit 1", "7"}}}, false},
		{"typing-shadow.html", [][]fill{{{"Query", "shoes"}}}, false},
	} {
		t.Run(tc.page, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := browsertest.Session(t)
			if err := s.Navigate(ctx, base+"/"+tc.page); err != nil {
				t.Fatal(err)
			}
			s.Settle(ctx, browser.SettleOptions{})
			last, err := s.Snapshot(ctx, browser.SnapshotOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, batch := range tc.batches {
				start := time.Now()
				for _, f := range batch {
					target := browser.Target{Label: f.label}
					switch {
					case f.label == "Find a product":
						target = browser.Target{Placeholder: f.label}
					case strings.HasPrefix(f.label, "ref "):
						role, name, _ := strings.Cut(strings.TrimPrefix(f.label, "ref "), " ")
						m := regexp.MustCompile(`- ` + role + ` "` + name + `" \[ref=(\w+)\]`).FindStringSubmatch(last.Text)
						if m == nil {
							t.Fatalf("no %s %q in\n%s", role, name, last.Text)
						}
						target = browser.Target{Ref: m[1]}
					}
					c := browser.Command{Action: browser.ActionFill, Target: target, Value: f.value}
					if out := s.Execute(ctx, c, browser.ExecOptions{Fingerprint: true}); out.Err != nil {
						t.Fatalf("%s: %v", c.Describe(), out.Err)
					}
				}
				s.Settle(ctx, browser.SettleOptions{Since: start, Typed: true})
				before := s.Patched()
				got, err := s.Snapshot(ctx, browser.SnapshotOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if patched := s.Patched() > before; patched != tc.patched {
					t.Errorf("after %v: patched %v, want %v", batch, patched, tc.patched)
				}
				want, err := s.FreshSnapshot(ctx, browser.SnapshotOptions{})
				if err != nil {
					t.Fatal(err)
				}
				last = want // the latest: its refs are the valid ones
				if g, w := sameRefs(got.Text), sameRefs(want.Text); g != w {
					t.Fatalf("after %v the representation shows\n%s\nwhere a fresh read shows\n%s", batch, g, w)
				}
				if g, w := sameRefs(got.Full), sameRefs(want.Full); g != w || got.Title != want.Title || got.Document != want.Document {
					t.Fatalf("after %v the full representation shows\n%s\nwhere a fresh read shows\n%s", batch, g, w)
				}
			}
		})
	}
}

var representationSeq = regexp.MustCompile(`\[ref=(f\d+)?s\d+([ect]\d+)\]`)

// sameRefs numbers every ref as of one representation, so two of the same
// page compare equal.
func sameRefs(s string) string { return representationSeq.ReplaceAllString(s, "[ref=${1}s${2}]") }

// TestAFillCheckedByTheSettleStillFailsWhenTheFieldRefusesTheText: a fill
// whose effect check is left to the settle that follows (one round trip
// fewer) is still found to have had no effect when the field keeps only
// part of the text, and one that took is not.
func TestAFillCheckedByTheSettleStillFailsWhenTheFieldRefusesTheText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, browsertest.Serve(t, "testdata")+"/voucher.html"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		label, value string
		refused      bool
	}{
		{"Name on card", "Ada Lovelace", false},
		{"Voucher code", "SPRING2026", true}, // maxlength 4
		{"Voucher code", "SAVE", false},
	} {
		s.Settle(ctx, browser.SettleOptions{})
		if _, err := s.Snapshot(ctx, browser.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		c := browser.Command{Action: browser.ActionFill, Target: browser.Target{Label: tc.label}, Value: tc.value}
		if out := s.Execute(ctx, c, browser.ExecOptions{Fingerprint: true, SettleChecksFill: true}); out.Err != nil {
			t.Fatalf("%s: the fill itself failed, before the settle: %v", c.Describe(), out.Err)
		}
		s.Settle(ctx, browser.SettleOptions{Since: start, Typed: true})
		err := s.FillChecked()
		if refused := err != nil; refused != tc.refused {
			t.Fatalf("%s: refused %v (%v), want %v", c.Describe(), refused, err, tc.refused)
		}
		if tc.refused && !strings.Contains(err.Error(), `had no effect: the field holds "SPRI"`) {
			t.Fatalf("%s: %v", c.Describe(), err)
		}
	}
}

// TestAFillSelectedWhileTheFieldIsReadIsTheRunnersFill: a fill whose field
// is focused and selected while its element is read replaces the text as
// the runner's fill does (a text input, a textarea of several lines, an
// empty value clearing it), and a field the runner would not fill at once
// (read-only, disabled, in a disabled fieldset, aria-disabled) is left to
// the runner's own fill, which waits for it: one enabled a moment later is
// filled, the others fail as the runner's fill fails.
func TestAFillSelectedWhileTheFieldIsReadIsTheRunnersFill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := browsertest.Session(t)
	if err := s.Navigate(ctx, browsertest.Serve(t, "testdata")+"/fields.html"); err != nil {
		t.Fatal(err)
	}
	// Each field's text so far: a fill that fails must leave every field,
	// not only its own, as it was (the text must not land in the field
	// that had the focus before).
	holds := map[string]string{"Nickname": "old nick", "User id": "u-17", "Plan code": "", "VAT number": "", "Team name": ""}
	for _, tc := range []struct {
		label, value string
		fails        bool
	}{
		{"Nickname", "Ada", false},
		{"Plan code", "PRO", true},
		{"Bio", "Countess of Lovelace", false},
		{"VAT number", "FR123", true},
		{"Nickname", "", false},
		{"Bio", "Notes", false},
		{"User id", "u-99", true},
		{"Bio", "More notes", false},
		{"Team name", "Analytical engines", true},
		{"Referral code", "FRIEND", false}, // enabled after 400 ms
	} {
		c := browser.Command{Action: browser.ActionFill, Target: browser.Target{Label: tc.label}, Value: tc.value}
		out := s.Execute(ctx, c, browser.ExecOptions{Fingerprint: true, Timeout: 1500 * time.Millisecond})
		if failed := out.Err != nil; failed != tc.fails {
			t.Fatalf("%s: failed %v (%v), want %v", c.Describe(), failed, out.Err, tc.fails)
		}
		if !tc.fails {
			holds[tc.label] = tc.value
		}
		for label, want := range holds {
			check := browser.Command{Action: browser.ActionVerify, Assert: browser.AssertValueEquals, Target: browser.Target{Label: label}, Value: want}
			if want == "" {
				check.Assert, check.Value = browser.AssertValueEmpty, ""
			}
			if v := s.Execute(ctx, check, browser.ExecOptions{Timeout: 500 * time.Millisecond}); v.Err != nil {
				t.Fatalf("after %s, %s: %v", c.Describe(), label, v.Err)
			}
		}
	}
}
