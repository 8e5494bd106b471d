package browser

import "testing"

// TestAGeneratedIdIsNeverALocator: ids and classes a build or a page load
// makes up are told from the ones people write.
func TestAGeneratedIdIsNeverALocator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		token     string
		generated bool
	}{
		{"todo-item-_pSwn5KMrokc52yUCKMHm", true},
		{"pSwnKMrokcyUCKMHm", true},
		{"css-1q2w3e4", true},
		{"sc-bdVaJa", true},
		{"jsx-2874356723", true},
		{"ember123", true},
		{"_ngcontent-c12", true},
		{":r1:", true},
		{"radix-:r2:-trigger", true},
		{"headlessui-menu-button-3", true},
		{"item-3", true},
		{"field12", true},
		{"a3f9c2e1", true},
		{"title_x7Ab2", true},
		{"Button_primary__2Xy9z", true},
		{"checkout", false},
		{"first-name", false},
		{"loginForm", false},
		{"new-todo", false},
		{"toggle-all", false},
		{"submit_button", false},
		{"promo", false},
		{"nav-main", false},
		{"strengths", false},
	} {
		if got := LooksGenerated(tc.token); got != tc.generated {
			t.Errorf("LooksGenerated(%q) = %v, want %v", tc.token, got, tc.generated)
		}
	}
}
