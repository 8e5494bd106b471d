package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// access is who may call a route.
type access int

const (
	public access = iota
	tenantOnly
	adminOnly
)

// route is one endpoint: how it is served, and how the OpenAPI document
// describes it. Both come from the same table, so no endpoint is served
// without being described.
type route struct {
	method, path string
	access       access
	summary      string
	handler      http.HandlerFunc
	query        []queryParam
	body         any    // the request body's Go type (a zero value); nil for none
	status       int    // the success status
	resp         any    // the success body's Go type; nil when media says what it is
	media        string // the success body's media types (comma-separated) when it is not JSON
}

// queryParam is an optional query parameter.
type queryParam struct {
	name, doc string
	integer   bool
	// enum are the values the API accepts; any other is its own 400
	// naming the parameter, so they document rather than constrain.
	enum []string
}

// stateNames are the job states' names, as the API's filter takes them.
func stateNames() []string {
	var out []string
	for _, s := range store.JobStates() {
		out = append(out, string(s))
	}
	return out
}

func kindNames() []string {
	out := make([]string, len(jobs.Kinds))
	for i, k := range jobs.Kinds {
		out[i] = string(k)
	}
	return out
}

// routes is the API: every endpoint, its handler and its contract.
func (s *Server) routes() []route {
	limit := func(max int) queryParam {
		return queryParam{name: "limit", integer: true, doc: fmt.Sprintf("at most this many (1 to %d)", max)}
	}
	origin := queryParam{name: "origin", doc: "one app's origin (scheme://host[:port]) only"}
	return []route{
		{method: "POST", path: "/v1/jobs", access: tenantOnly, handler: s.submitJob, body: jobs.Submission{}, status: 202, resp: JobView{},
			summary: "Submit a job: a scenario, an exploration, or a stored test's replay or repair (Idempotency-Key header to retry safely)"},
		{method: "POST", path: "/v1/suites/run", access: tenantOnly, handler: s.submitSuite(jobs.KindSuiteRun), body: jobs.SuiteRequest{}, status: 202, resp: JobView{},
			summary: "Replay the tenant's stored tests (all, listed, or tagged), one child job each"},
		{method: "POST", path: "/v1/suites/repair", access: tenantOnly, handler: s.submitSuite(jobs.KindSuiteRepair), body: jobs.SuiteRequest{}, status: 202, resp: JobView{},
			summary: "Replay and repair the tenant's stored tests: drift healed, regressions reported with evidence"},
		{method: "POST", path: "/v1/projects/{name}", access: tenantOnly, handler: s.uploadProject, body: ProjectUpload{}, status: 201, resp: ProjectView{},
			summary: "Upload a @playwright/test project (archive or files) as its current version; a worker lists its tests with the runner"},
		{method: "GET", path: "/v1/projects", access: tenantOnly, handler: s.projects, status: 200, resp: ProjectList{}, summary: "The tenant's projects"},
		{method: "GET", path: "/v1/projects/{name}", access: tenantOnly, handler: s.project, status: 200, resp: ProjectView{},
			query: []queryParam{{name: "version", doc: "a version's digest (default: the current one)"}}, summary: "A project's version and its tests as the runner lists them"},
		{method: "POST", path: "/v1/projects/{name}/run", access: tenantOnly, handler: s.submitProject(jobs.KindProjectRun), body: jobs.ProjectRequest{}, status: 202, resp: JobView{},
			summary: "Run a project's tests with the real runner in the sandbox: a project_run job whose test files run in parts, each a project_file child running the runner over whole files"},
		{method: "POST", path: "/v1/projects/{name}/repair", access: tenantOnly, handler: s.submitProject(jobs.KindProjectRepair), body: jobs.ProjectRequest{}, status: 202, resp: JobView{},
			summary: "Repair a project: heal drifted locators where the project defines them, a project_repair_file child per test file, their heals merged into one patch verified in the sandbox; regressions are reported, never healed"},
		{method: "POST", path: "/v1/projects/{name}/traces", access: tenantOnly, handler: s.uploadTraces, body: ProjectTraces{}, status: 200, resp: TracesView{},
			summary: "Upload a green run of the project from your CI (its JSON report and trace.zip files): what its passing tests acted on is what a repair heals from, for tests no run on webpilot saw pass"},
		{method: "POST", path: "/v1/projects/{name}/versions/{version}/accept", access: tenantOnly, handler: s.acceptProjectVersion, status: 200, resp: AcceptedProjectView{},
			summary: "Make a version (a repair's proposal) the project's current one"},
		{method: "GET", path: "/v1/jobs/{id}/patch", access: tenantOnly, handler: s.patch, status: 200, media: "text/x-diff",
			summary: "A project repair's verified patch: one unified diff over the project's files (git apply takes it)"},
		{method: "GET", path: "/v1/jobs", access: tenantOnly, handler: s.list, status: 200, resp: JobList{}, summary: "List the tenant's jobs, newest first",
			query: []queryParam{limit(100), {name: "after", doc: "the next value of the previous page"},
				{name: "state", doc: "only jobs in this state", enum: stateNames()}, {name: "kind", doc: "only jobs of this kind", enum: kindNames()}}},
		{method: "GET", path: "/v1/jobs/{id}", access: tenantOnly, handler: s.get, status: 200, resp: JobView{}, summary: "A job with its steps, usage and report"},
		{method: "GET", path: "/v1/jobs/{id}/script", access: tenantOnly, handler: s.script, status: 200, media: "text/typescript",
			summary: "The job's @playwright/test spec"},
		{method: "GET", path: "/v1/jobs/{id}/history", access: tenantOnly, handler: s.history, status: 200, resp: HistoryList{},
			summary: "Every command, check and tool call of the job's attempts"},
		{method: "GET", path: "/v1/jobs/{id}/events", access: tenantOnly, handler: s.events, status: 200, media: "text/event-stream",
			summary: "Server-sent events: step, test, finding and state as they happen, then end"},
		{method: "POST", path: "/v1/jobs/{id}/cancel", access: tenantOnly, handler: s.cancel, status: 202, resp: JobView{}, summary: "Ask a job to stop"},
		{method: "GET", path: "/v1/jobs/{id}/artifacts/{name}", access: tenantOnly, handler: s.artifact, status: 200, media: "image/png,image/jpeg,application/xml,application/zip,application/octet-stream",
			summary: "A file the job produced: a step's picture (image/jpeg), a failing state's screenshot (image/png), a project run's junit.xml and playwright-report.zip, a failing test's trace (the job view's reports name them)"},
		{method: "GET", path: "/v1/jobs/{id}/findings", access: tenantOnly, handler: s.findings, status: 200, resp: FindingList{},
			summary: "An exploration's findings with their evidence and reproductions"},
		{method: "POST", path: "/v1/webhooks", access: tenantOnly, handler: s.createWebhook, body: WebhookRequest{}, status: 201, resp: WebhookCreated{},
			summary: "Send the tenant's events (job.finished, project.repaired, regression.found) to a URL, each delivery signed with the secret shown once here"},
		{method: "GET", path: "/v1/webhooks", access: tenantOnly, handler: s.webhooks, status: 200, resp: WebhookList{}, summary: "The tenant's webhooks"},
		{method: "GET", path: "/v1/webhooks/{id}", access: tenantOnly, handler: s.webhook, status: 200, resp: store.Webhook{}, summary: "A webhook"},
		{method: "DELETE", path: "/v1/webhooks/{id}", access: tenantOnly, handler: s.deleteWebhook, status: 200, resp: Deleted{},
			summary: "Stop a webhook: its pending deliveries are dropped, its deliveries stay listed"},
		{method: "GET", path: "/v1/webhooks/{id}/deliveries", access: tenantOnly, handler: s.deliveries, status: 200, resp: DeliveryList{},
			summary: "A webhook's deliveries, newest first, each with every attempt (status or error, when, how long)", query: []queryParam{limit(200)}},
		{method: "GET", path: "/v1/credits", access: tenantOnly, handler: s.credits, status: 200, resp: AccountView{}, summary: "The tenant's credits and latest ledger entries"},
		{method: "GET", path: "/v1/experiences", access: tenantOnly, handler: s.experiences, status: 200, resp: ExperienceList{},
			summary: "What the tenant's jobs learned about its apps", query: []queryParam{origin}},
		{method: "DELETE", path: "/v1/experiences", access: tenantOnly, handler: s.forgetExperiences, status: 200, resp: Deleted{},
			summary: "Forget learned notes: one (id), an origin's, or all", query: []queryParam{origin, {name: "id", integer: true, doc: "one note"}}},
		{method: "GET", path: "/v1/step-cache", access: tenantOnly, handler: s.stepCache, status: 200, resp: StepCacheList{},
			summary: "Steps re-runs take without the model", query: []queryParam{origin, limit(500)}},
		{method: "DELETE", path: "/v1/step-cache", access: tenantOnly, handler: s.clearStepCache, status: 200, resp: Deleted{},
			summary: "Clear the step cache (of one origin)", query: []queryParam{origin}},
		{method: "GET", path: "/v1/tests", access: tenantOnly, handler: s.tests, status: 200, resp: TestList{}, summary: "The tenant's suite"},
		{method: "POST", path: "/v1/tests/project", access: tenantOnly, handler: s.testsToProject, body: TestsToProject{}, status: 201, resp: TestsProjectView{},
			summary: "Write stored tests as a project's version (each spec with its steps' manifest), to run and repair with the runner"},
		{method: "POST", path: "/v1/tests/import", access: tenantOnly, handler: s.importRetired, status: 410, resp: ErrorBody{},
			summary: "Retired: upload the specs as a project (POST /v1/projects/{name}), which runs them as written and repairs them"},
		{method: "GET", path: "/v1/tests/{id}", access: tenantOnly, handler: s.test, status: 200, resp: TestView{}, summary: "A test: scenario, script and manifest"},
		{method: "GET", path: "/v1/tests/{id}/versions", access: tenantOnly, handler: s.versions, status: 200, resp: VersionList{}, summary: "A test's versions, newest first"},
		{method: "GET", path: "/v1/tests/{id}/versions/{v}", access: tenantOnly, handler: s.version, status: 200, resp: store.TestVersion{}, summary: "One version"},
		{method: "GET", path: "/v1/tests/{id}/versions/{v}/diff", access: tenantOnly, handler: s.versionDiff, status: 200, media: "text/x-diff",
			summary: "The unified diff a repair proposed"},
		{method: "POST", path: "/v1/tests/{id}/versions/{v}/accept", access: tenantOnly, handler: s.decide(true), status: 200, resp: store.TestVersion{},
			summary: "Accept a proposed version: it becomes the test's script"},
		{method: "POST", path: "/v1/tests/{id}/versions/{v}/reject", access: tenantOnly, handler: s.decide(false), status: 200, resp: store.TestVersion{},
			summary: "Reject a proposed version"},
		{method: "POST", path: "/v1/admin/tenants", access: adminOnly, handler: s.createTenant, body: TenantRequest{}, status: 201, resp: TenantCreated{},
			summary: "Create a tenant; its API key is shown once"},
		{method: "POST", path: "/v1/admin/tenants/{id}/credits", access: adminOnly, handler: s.grant, body: GrantRequest{}, status: 200, resp: AccountView{},
			summary: "Grant credits (idempotent by key)"},
		{method: "GET", path: "/v1/admin/tenants/{id}/credits", access: adminOnly, handler: s.account, status: 200, resp: AccountView{},
			summary: "A tenant's credits and ledger"},
		{method: "GET", path: "/v1/openapi.json", access: public, handler: s.openAPIHandler, status: 200, media: "application/json", summary: "This document"},
		{method: "GET", path: "/healthz", access: public, handler: healthz, status: 200, resp: Health{}, summary: "The process serves"},
		{method: "GET", path: "/readyz", access: public, handler: s.ready, status: 200, resp: ReadyView{}, summary: "Postgres and NATS answer (503 naming what does not)"},
		{method: "GET", path: "/metrics", access: public, handler: s.metricsHandler().ServeHTTP, status: 200, media: "text/plain", summary: "Prometheus metrics"},
	}
}

// Health is /healthz's body.
type Health struct {
	Status string `json:"status"`
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Health{Status: "ok"})
}

var (
	openAPIOnce sync.Once
	openAPIJSON []byte
	openAPIErr  error
)

func (s *Server) openAPIHandler(w http.ResponseWriter, r *http.Request) {
	openAPIOnce.Do(func() {
		var doc *openapi3.T
		if doc, openAPIErr = OpenAPI(); openAPIErr == nil {
			openAPIJSON, openAPIErr = json.MarshalIndent(doc, "", "  ")
		}
	})
	if openAPIErr != nil {
		s.internal(w, r, openAPIErr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIJSON)
}

// OpenAPI builds the API's OpenAPI 3.1 document from the route table and the
// Go types the handlers decode and answer.
func OpenAPI() (*openapi3.T, error) {
	doc := &openapi3.T{
		OpenAPI: "3.1.0",
		Info: &openapi3.Info{Title: "webpilot", Version: "v1",
			Description: "Natural-language scenarios to Playwright tests, bulk repair of failing suites, and exploration of web apps. " +
				"Tenants authenticate with their API key as a bearer token; operators with the admin token. " +
				"Request bodies are read as JSON whatever their Content-Type. " +
				"Every error answers an ErrorBody; invalid input names each field at fault by its JSON path."},
		Paths: openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas: openapi3.Schemas{},
			SecuritySchemes: openapi3.SecuritySchemes{
				"apiKey":     &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer").WithDescription("the tenant's API key")},
				"adminToken": &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer").WithDescription("the operators' admin token")},
			},
		},
	}
	requests, responses := newSchemas(false, doc.Components.Schemas), newSchemas(true, doc.Components.Schemas)
	errSchema, err := responses.of(ErrorBody{})
	if err != nil {
		return nil, err
	}
	pathParam := regexp.MustCompile(`\{(\w+)\}`)
	for _, rt := range (&Server{}).routes() {
		op := openapi3.NewOperation()
		op.Summary = rt.summary
		op.OperationID = operationID(rt.method, rt.path)
		switch rt.access {
		case tenantOnly:
			op.Security = &openapi3.SecurityRequirements{{"apiKey": []string{}}}
		case adminOnly:
			op.Security = &openapi3.SecurityRequirements{{"adminToken": []string{}}}
		}
		for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
			op.AddParameter(openapi3.NewPathParameter(m[1]).WithSchema(openapi3.NewStringSchema()))
		}
		for _, q := range rt.query {
			sch := openapi3.NewStringSchema()
			if q.integer {
				// A malformed number is the API's own 400 naming the parameter,
				// so the contract does not reject it first.
				sch = openapi3.NewStringSchema().WithPattern(`^-?[0-9]+$`)
			}
			p := openapi3.NewQueryParameter(q.name).WithSchema(sch)
			p.Description = q.doc
			if len(q.enum) > 0 {
				p.Description += " (" + strings.Join(q.enum, ", ") + ")"
			}
			op.AddParameter(p)
		}
		if rt.method == "POST" && rt.path == "/v1/jobs" {
			h := openapi3.NewHeaderParameter("Idempotency-Key").WithSchema(openapi3.NewStringSchema())
			h.Description = "a retried submission with the same key and body answers the first job"
			op.AddParameter(h)
		}
		if rt.body != nil {
			sch, err := requests.of(rt.body)
			if err != nil {
				return nil, fmt.Errorf("%s %s request: %w", rt.method, rt.path, err)
			}
			op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchemaRef(sch)}
		}
		ok := openapi3.NewResponse().WithDescription(http.StatusText(rt.status))
		switch {
		case rt.resp != nil:
			sch, err := responses.of(rt.resp)
			if err != nil {
				return nil, fmt.Errorf("%s %s response: %w", rt.method, rt.path, err)
			}
			ok.WithJSONSchemaRef(sch)
		case rt.media == "application/json":
			ok.WithJSONSchema(openapi3.NewObjectSchema())
		default:
			ok.WithContent(openapi3.NewContentWithSchema(openapi3.NewStringSchema(), strings.Split(rt.media, ",")))
		}
		op.AddResponse(rt.status, ok)
		if rt.path == "/readyz" {
			sch, _ := responses.of(ReadyView{})
			op.AddResponse(http.StatusServiceUnavailable, openapi3.NewResponse().WithDescription("a dependency does not answer").WithJSONSchemaRef(sch))
		}
		op.Responses.Set("default", &openapi3.ResponseRef{Value: openapi3.NewResponse().
			WithDescription("an error: 400 invalid input (fields name each JSON path at fault), 401, 404, 409, 413, 429 (Retry-After), 500, 503").
			WithJSONSchemaRef(errSchema)})
		doc.AddOperation(rt.path, rt.method, op)
	}
	// Loading the document as a client would resolves its references.
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	if doc, err = openapi3.NewLoader().LoadFromData(raw); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return doc, nil
}

// operationID names an operation after its method and path:
// "GET /v1/jobs/{id}/history" is getJobsIdHistory.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.Split(strings.TrimPrefix(path, "/v1"), "/") {
		part = strings.Trim(part, "{}")
		for _, w := range strings.FieldsFunc(part, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// rawTypes are the Go types the API's raw JSON fields hold, by field name:
// they are stored as JSON written from these types and passed through.
var rawTypes = map[string]reflect.Type{
	"steps":        reflect.TypeFor[[]orchestrator.StepReport](),
	"timing":       reflect.TypeFor[orchestrator.Timing](),
	"repair":       reflect.TypeFor[suite.Report](),
	"evidence":     reflect.TypeFor[explore.Evidence](),
	"reproduction": reflect.TypeFor[explore.Reproduction](),
	"scenario":     reflect.TypeFor[scenario.Scenario](),
	"manifest":     reflect.TypeFor[[]orchestrator.ManifestStep](),
	"changes":      reflect.TypeFor[[]suite.StepChange](),
	"exploration":  reflect.TypeFor[explore.Result](),
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// schemas builds JSON Schemas from Go types as encoding/json reads and
// writes them. For responses, a field without omitempty is required and a
// nil slice, map or pointer may be null; requests are decoded strictly, so
// they allow no unknown field.
type schemas struct {
	response bool
	gen      *openapi3gen.Generator
	// components are the schemas of recursive types, which are referred to.
	components openapi3.Schemas
}

func newSchemas(response bool, components openapi3.Schemas) *schemas {
	s := &schemas{response: response, components: components}
	s.gen = openapi3gen.NewGenerator(openapi3gen.SchemaCustomizer(s.customize),
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true}),
		openapi3gen.CreateTypeNameGenerator(s.typeName))
	return s
}

// typeName names a type's component by its package ("scenario.Step");
// a request's types are stricter than the same types answered, so they
// are components of their own ("scenario.StepInput").
func (s *schemas) typeName(t reflect.Type) string {
	if t.Name() == "" {
		return ""
	}
	name := path.Base(t.PkgPath()) + "." + t.Name()
	if !s.response {
		name += "Input"
	}
	return name
}

func (s *schemas) of(v any) (*openapi3.SchemaRef, error) {
	return s.gen.NewSchemaRefForValue(v, s.components)
}

func (s *schemas) customize(name string, t reflect.Type, tag reflect.StructTag, sch *openapi3.Schema) error {
	jsonTag := tag.Get("json")
	omitted := strings.Contains(jsonTag, ",omitempty")
	if t == rawMessage {
		if rt, ok := rawTypes[strings.Split(jsonTag, ",")[0]]; ok {
			ref, err := newSchemas(s.response, s.components).of(reflect.Zero(rt).Interface())
			if err != nil {
				return err
			}
			*sch = *ref.Value
		}
	}
	switch t {
	case reflect.TypeFor[jobs.Kind]():
		sch.Enum = anys(jobs.Kinds)
	case reflect.TypeFor[scenario.Step]():
		// A step is a sentence or an object (the object keywords do not
		// apply to a string).
		sch.Type = &openapi3.Types{"object", "string"}
	}
	if sch.Type != nil && sch.Type.Permits("object") && t.Kind() == reflect.Struct {
		if s.response {
			for _, f := range reflect.VisibleFields(t) {
				n, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.IsExported() && n != "" && n != "-" && !strings.Contains(opts, "omitempty") && !f.Anonymous {
					sch.Required = append(sch.Required, n)
				}
			}
			slices.Sort(sch.Required)
		} else {
			sch.AdditionalProperties = openapi3.AdditionalProperties{Has: new(bool)}
		}
	}
	// JSON Schema 2020-12 has no nullable: null is a type. Go writes a nil
	// slice, map or pointer as null unless the field is omitempty.
	nullable := sch.Nullable || t.Kind() == reflect.Slice || t.Kind() == reflect.Map
	sch.Nullable = false
	if s.response && nullable && !omitted && sch.Type != nil && !sch.Type.IsEmpty() && !sch.Type.IncludesNull() {
		sch.Type.With("null")
	}
	return nil
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// ContractTypes are the Go types of the API's contract: every route's
// request and success bodies, the error body, and the types the raw JSON
// fields hold. The OpenAPI document is built from them, and so is the
// public client's copy of them (package client, generated).
func ContractTypes() []reflect.Type {
	var out []reflect.Type
	add := func(v any) {
		if v != nil {
			out = append(out, reflect.TypeOf(v))
		}
	}
	add(ErrorBody{})
	for _, rt := range (&Server{}).routes() {
		add(rt.body)
		add(rt.resp)
	}
	add(ReadyView{})
	names := make([]string, 0, len(rawTypes))
	for n := range rawTypes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, rawTypes[n])
	}
	return out
}
