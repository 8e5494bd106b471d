package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/client"
)

// TestTheGoClientDrivesTheAPI uses package client as a customer's Go
// program would: an operator makes a tenant and grants it credits (a
// retried grant applies once), the tenant's bad submission comes back as
// an *client.Error naming the field, a scenario is followed event by event
// to its end, and its spec, stored test and charge read back typed.
func TestTheGoClientDrivesTheAPI(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	s.startWorker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	admin := client.New(s.api.URL, adminToken)
	made, err := admin.CreateTenant(ctx, client.TenantRequest{Name: "go-client-co"})
	if err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	for range 2 {
		if _, err := admin.GrantCredits(ctx, made.Tenant.ID, client.GrantRequest{Credits: 2, IdempotencyKey: "first"}); err != nil {
			t.Fatalf("grant: %v", err)
		}
	}
	c := client.New(s.api.URL, made.APIKey)
	acct, err := c.Credits(ctx)
	if err != nil || acct.BalanceCredits != 2 {
		t.Fatalf("credits after the same grant twice: %+v, %v (want a balance of 2)", acct, err)
	}

	// A scenario without a base URL: a 400 naming it, nothing made.
	_, err = c.SubmitJob(ctx, client.Submission{Kind: client.KindScenario,
		Scenario: &client.Scenario{Name: "no base", Steps: []client.Step{{Text: "Click \"Add\""}}}})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || len(ae.Fields) == 0 || ae.Fields[0].Field != "scenario.base_url" {
		t.Fatalf("a scenario without base_url: %v (want a 400 naming scenario.base_url)", err)
	}
	if l, err := c.Jobs(ctx, client.JobsQuery{}); err != nil || len(l.Jobs) != 0 {
		t.Fatalf("jobs after a refused submission: %+v, %v", l.Jobs, err)
	}

	sc := client.ScenarioFromText("keep the list", "base: "+s.demo+"/list\nFill \"New item\" with \"Oat milk\"\nClick \"Add\"\nVerify \"Oat milk\" is visible\n", "")
	job, err := c.SubmitJob(ctx, client.Submission{Kind: client.KindScenario, Scenario: &sc})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if job.Kind != client.KindScenario || job.ID == "" {
		t.Fatalf("submitted job: %+v", job)
	}
	steps := 0
	err = c.Events(ctx, job.ID, func(e client.Event) error {
		if e.Name == "step" {
			steps++
		}
		return nil
	})
	if err != nil || steps != len(sc.Steps) {
		t.Fatalf("events: %d steps, %v (want %d steps, then the end)", steps, err, len(sc.Steps))
	}
	job, err = c.Wait(ctx, job.ID, 200*time.Millisecond)
	if err != nil || job.State != client.JobStateSucceeded || job.ChargedCredits <= 0 {
		t.Fatalf("the job as it ended: %+v, %v", job, err)
	}
	script, err := c.Script(ctx, job.ID)
	if err != nil || !strings.Contains(script, "Oat milk") {
		t.Fatalf("script: %v\n%s", err, script)
	}
	s.passSpec(t, made.APIKey, job.ID)

	tests, err := c.Tests(ctx)
	if err != nil || len(tests.Tests) != 1 || tests.Tests[0].Name != "keep the list" {
		t.Fatalf("stored tests: %+v, %v", tests, err)
	}
	stored, err := c.Test(ctx, tests.Tests[0].ID)
	if err != nil || stored.Script != script {
		t.Fatalf("the stored test's script is not the job's: %v", err)
	}
	acct, err = c.Credits(ctx)
	if err != nil || acct.BalanceCredits >= 2 || acct.AvailableCredits != acct.BalanceCredits-acct.HeldCredits {
		t.Fatalf("credits after the job: %+v, %v", acct, err)
	}

	// Another tenant's key does not see the job.
	if _, err := c.WithToken(s.otherKey(t)).Job(ctx, job.ID); !client.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("another tenant's view of the job: %v (want 404)", err)
	}
	var ue *client.UnreachableError
	if _, err := client.New("http://127.0.0.1:1", made.APIKey).Job(ctx, job.ID); !errors.As(err, &ue) {
		t.Fatalf("nothing listening: %v (want an UnreachableError)", err)
	}
}
