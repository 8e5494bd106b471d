package explore

import "testing"

func TestSafetyMatchesWholeWordsOfNamesAndLinks(t *testing.T) {
	t.Parallel()
	s := newSafety([]string{"delete account", "pay", "sign out", "logout"})
	for text, want := range map[string]string{
		"Delete account":       "delete account",
		"Pay now":              "pay",
		"Payment details":      "",
		"PayPal help":          "",
		"Sign out":             "sign out",
		"/account/logout?next": "logout",
		"Sign up":              "",
	} {
		if got := s.denies(text); got != want {
			t.Errorf("denies(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestAStateIsItsStructureNotItsContents(t *testing.T) {
	t.Parallel()
	page := func(cart, status string, rows int) string {
		s := "- link \"Cart (" + cart + ")\" [ref=e1]:\n  - /url: /cart\n- paragraph [ref=e2]: " + status + "\n- list [ref=e3]:\n"
		for i := 0; i < rows; i++ {
			s += "  - listitem [ref=e9]: item\n"
		}
		return s + "- button \"Add\" [ref=e4]\n"
	}
	a := parseRepresentation(page("1", "Added", 2), "http://a.test/shop/")
	b := parseRepresentation(page("2", "Added again", 5), "http://a.test/shop/")
	c := parseRepresentation(page("2", "", 2)+"- dialog \"Confirm\" [ref=e5]\n", "http://a.test/shop/")
	if a.Hash != b.Hash {
		t.Errorf("counts, texts and list lengths changed the state: %s vs %s", a.Hash, b.Hash)
	}
	if a.Hash == c.Hash {
		t.Error("a dialog opening did not change the state")
	}
	if len(a.Elements) != 2 || a.Elements[0].Href != "http://a.test/cart" || a.Elements[0].Key != b.Elements[0].Key {
		t.Errorf("elements: %+v", a.Elements)
	}
}

func TestLinksAreJudgedByWhereTheyLeadAndControlsByTheirNames(t *testing.T) {
	t.Parallel()
	s := newSafety([]string{"delete", "remove", "logout", "sign out", "delete account"})
	const page = "http://a.test/list"
	for _, c := range []struct {
		e    element
		want string
	}{
		{element{Role: "link", Name: "Add/Remove Elements", Href: "http://a.test/add_remove_elements/"}, ""},
		{element{Role: "link", Name: "Delete a record (docs)", Href: "http://a.test/docs/records"}, ""},
		{element{Role: "link", Name: "Log out", Href: "http://a.test/logout"}, "logout"},
		{element{Role: "link", Name: "Bye", Href: "http://a.test/account/sign-out?next=/"}, "sign out"},
		{element{Role: "link", Name: "x", Href: "http://a.test/items/3/delete"}, "delete"},
		{element{Role: "link", Name: "x", Href: "http://a.test/delete-account"}, "delete"},
		{element{Role: "link", Name: "x", Href: "http://a.test/cart?action=remove&id=2"}, "remove"},
		// A link that stays on its page runs a script: it acts, like a button.
		{element{Role: "link", Name: "Remove", Href: "http://a.test/list"}, "remove"},
		{element{Role: "button", Name: "Remove item"}, "remove"},
		{element{Role: "button", Name: "Removed items"}, ""},
		{element{Role: "button", Name: "Delete account"}, "delete"},
	} {
		if got := s.refuses(c.e, page); got != c.want {
			t.Errorf("refuses(%s %q → %s) = %q, want %q", c.e.Role, c.e.Name, c.e.Href, got, c.want)
		}
	}
}
