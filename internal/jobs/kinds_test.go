package jobs_test

import (
	"slices"
	"testing"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestAProjectRequestsOriginsAreOriginsTheGuardAllows: each bad origin is
// named by its JSON path; a target the egress policy refuses is refused
// here, before any job exists.
func TestAProjectRequestsOriginsAreOriginsTheGuardAllows(t *testing.T) {
	t.Parallel()
	urls := netguard.New([]string{"127.0.0.1:8080"})
	for _, tc := range []struct {
		name    string
		base    string
		origins map[string]string
		fields  []string
	}{
		{"good", "", map[string]string{"https://staging.acme.test": "http://127.0.0.1:8080", "http://api.acme.test:8080": "http://127.0.0.1:8080/"}, nil},
		// The suite's own origin as its base URL, reached at its target.
		{"a base URL on a remapped origin", "https://staging.acme.test/shop/", map[string]string{"https://staging.acme.test": "http://127.0.0.1:8080"}, nil},
		{"a base URL on no remapped origin", "https://staging.acme.test/shop/", map[string]string{"https://api.acme.test": "http://127.0.0.1:8080"}, []string{"$.base_url"}},
		{"a base URL on a remapped origin's other scheme", "http://staging.acme.test/", map[string]string{"https://staging.acme.test": "http://127.0.0.1:8080"}, []string{"$.base_url"}},
		{"a key with a path", "", map[string]string{"https://staging.acme.test/app": "http://127.0.0.1:8080"}, []string{`$.origins["https://staging.acme.test/app"]`}},
		{"a key not http", "", map[string]string{"ftp://files.acme.test": "http://127.0.0.1:8080"}, []string{`$.origins["ftp://files.acme.test"]`}},
		{"a target not an origin", "", map[string]string{"https://a.test": "example.com"}, []string{`$.origins["https://a.test"]`}},
		{"a target the guard refuses", "", map[string]string{"https://a.test": "http://127.0.0.1:9999", "https://b.test": "http://127.0.0.1:8080"},
			[]string{`$.origins["https://a.test"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := jobs.ProjectRequest{Name: "shop", BaseURL: tc.base, Origins: tc.origins}
			var v scenario.ValidationError
			r.Validate(&v, "$", urls)
			var fields []string
			for _, f := range v {
				fields = append(fields, f.Field)
			}
			if !slices.Equal(fields, tc.fields) {
				t.Fatalf("fields %q (%v), want %q", fields, v, tc.fields)
			}
		})
	}
}

// TestABaselineIsCheckedAsTheTargetIs: a repair's baseline URL and origins
// pass the same checks as its target's, each named by its JSON path, and
// only a repair takes them.
func TestABaselineIsCheckedAsTheTargetIs(t *testing.T) {
	t.Parallel()
	urls := netguard.New([]string{"127.0.0.1:8080", "prod.acme.test"})
	for _, tc := range []struct {
		name   string
		kind   jobs.Kind
		req    jobs.ProjectRequest
		fields []string
	}{
		{"good", jobs.KindProjectRepair, jobs.ProjectRequest{BaseURL: "http://127.0.0.1:8080", BaselineURL: "https://prod.acme.test/",
			BaselineOrigins: map[string]string{"https://staging.acme.test": "https://prod.acme.test"}}, nil},
		{"not a URL", jobs.KindProjectRepair, jobs.ProjectRequest{BaselineURL: "prod.acme.test"}, []string{"project.baseline_url"}},
		{"a host the guard refuses", jobs.KindProjectRepair, jobs.ProjectRequest{BaselineURL: "http://10.0.0.8/"}, []string{"project.baseline_url"}},
		{"an origin the guard refuses", jobs.KindProjectRepair, jobs.ProjectRequest{BaselineOrigins: map[string]string{"https://staging.acme.test": "http://127.0.0.1:9999"}},
			[]string{`project.baseline_origins["https://staging.acme.test"]`}},
		{"on a plain run", jobs.KindProjectRun, jobs.ProjectRequest{BaselineURL: "https://prod.acme.test/"}, []string{"project.baseline_url"}},
		{"a run's parts, which the worker cuts", jobs.KindProjectRun, jobs.ProjectRequest{Parts: 64}, []string{"project.parts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := tc.req
			req.Name = "shop"
			sub := jobs.Submission{Kind: tc.kind, Project: &req}
			err := sub.Validate(urls)
			var fields []string
			if v, ok := err.(scenario.ValidationError); ok {
				for _, f := range v {
					fields = append(fields, f.Field)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fields, tc.fields) {
				t.Fatalf("fields %q (%v), want %q", fields, err, tc.fields)
			}
		})
	}
}

// TestAScenariosProjectIsAProjectsName: the project a scenario is written
// into is named as projects are, or the field is named in the 400.
func TestAScenariosProjectIsAProjectsName(t *testing.T) {
	t.Parallel()
	urls := netguard.New([]string{"127.0.0.1:8080"})
	for _, tc := range []struct {
		project string
		fields  []string
	}{
		{"", nil},
		{"shop-e2e", nil},
		{"../other-tenant", []string{"scenario.project"}},
		{"a b", []string{"scenario.project"}},
	} {
		sub := jobs.Submission{Kind: jobs.KindScenario, Scenario: &scenario.Scenario{Name: "x", BaseURL: "http://127.0.0.1:8080/",
			Steps: []scenario.Step{{Text: "Go to /"}}, Project: tc.project}}
		var fields []string
		if v, ok := sub.Validate(urls).(scenario.ValidationError); ok {
			for _, f := range v {
				fields = append(fields, f.Field)
			}
		}
		if !slices.Equal(fields, tc.fields) {
			t.Errorf("project %q: fields %q, want %q", tc.project, fields, tc.fields)
		}
	}
}
