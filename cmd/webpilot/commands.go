// Command webpilot is the user CLI: submit scenarios, follow their progress,
// fetch generated tests, run and repair suites, explore apps, and (with the
// admin token) manage tenants and credits.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webpilot/webpilot/client"
)

// version is set at build time (-ldflags "-X main.version=…"); otherwise
// the module's version, or the VCS revision it was built from.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v = s.Value[:12]
		}
	}
	if v == "" {
		v = "devel"
	}
	return v
}

func main() {
	if err := newRoot(os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "webpilot:", err)
		os.Exit(1)
	}
}

// run executes the CLI with args (tests call it).
func run(args []string, out io.Writer) error {
	root := newRoot(out, io.Discard)
	root.SetArgs(args)
	return root.Execute()
}

// globals are the flags every command takes.
type globals struct {
	json bool
	api  string
}

func (g *globals) conn() *conn {
	base := g.api
	if base == "" {
		base = os.Getenv("WEBPILOT_API")
	}
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	c := newConn()
	c.base = strings.TrimRight(base, "/")
	return c
}

func newRoot(out, errOut io.Writer) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "webpilot",
		Short: "Turn test scenarios into Playwright tests, repair suites, explore apps",
		Long: `webpilot — turn test scenarios into Playwright tests, repair failing suites, explore apps for bugs.

Environment:
  WEBPILOT_API          dispatcher URL (default http://127.0.0.1:8080; --api overrides)
  WEBPILOT_API_KEY      tenant API key
  WEBPILOT_ADMIN_TOKEN  admin token (default: read from $WEBPILOT_DATA_DIR/admin.token)`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print JSON (one object, or one per event while following)")
	root.PersistentFlags().StringVar(&g.api, "api", "", "dispatcher URL (default $WEBPILOT_API or http://127.0.0.1:8080)")

	root.AddCommand(
		&cobra.Command{Use: "version", Short: "Print the CLI's version", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if g.json {
					fmt.Fprintf(out, "{\"version\":%q}\n", versionString())
					return nil
				}
				fmt.Fprintln(out, "webpilot", versionString())
				return nil
			}},
		tenantCommand(g, out), creditsCommand(g, out), submitCommand(g, out),
		jobCommand(g, out, "watch", "Follow a job step by step until it ends (non-zero unless it succeeded)"),
		jobCommand(g, out, "job", "Print a job"),
		jobCommand(g, out, "script", "Print the @playwright/test spec a job generated"),
		jobCommand(g, out, "cancel", "Cancel a job (a suite's children with it)"),
		jobCommand(g, out, "history", "Print what a job did, command by command"),
		jobsCommand(g, out), suiteCommand(g, out), testCommand(g, out), testsCommand(g, out), importCommand(),
		exploreCommand(g, out), findingsCommand(g, out), planCommand(g, out), cacheCommand(g, out), projectCommand(g, out), webhookCommand(g, out),
		mcpCommand(errOut),
	)
	return root
}

func tenantCommand(g *globals, out io.Writer) *cobra.Command {
	t := &cobra.Command{Use: "tenant", Short: "Manage tenants (admin)"}
	var maxRunning int
	create := &cobra.Command{Use: "create NAME", Short: "Create a tenant; prints its API key once", Args: cobra.ExactArgs(1),
		Example: "  webpilot tenant create --max-running 3 acme",
		RunE: func(cmd *cobra.Command, args []string) error {
			return tenantCmd(g.conn(), args[0], maxRunning, out, g.json)
		}}
	create.Flags().IntVar(&maxRunning, "max-running", 0, "jobs the tenant may run at once (0: the default)")
	t.AddCommand(create)
	return t
}

func creditsCommand(g *globals, out io.Writer) *cobra.Command {
	c := &cobra.Command{Use: "credits", Short: "Balances, ledgers and grants"}
	var key string
	grant := &cobra.Command{Use: "grant TENANT_ID CREDITS", Short: "Add credits to a tenant (admin); a retry never grants twice",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			amount, err := strconv.ParseFloat(args[1], 64)
			if err != nil {
				return fmt.Errorf("CREDITS must be a number, got %q", args[1])
			}
			return creditsGrant(g.conn(), args[0], amount, key, out, g.json)
		}}
	grant.Flags().StringVar(&key, "key", "", "idempotency key: the same key grants once however often it is sent (default: a new one, printed)")
	show := &cobra.Command{Use: "show [TENANT_ID]", Short: "Your balance and ledger (any tenant's with the admin token)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return creditsShow(g.conn(), id, out, g.json)
		}}
	c.AddCommand(grant, show)
	return c
}

func submitCommand(g *globals, out io.Writer) *cobra.Command {
	var base, project string
	var follow bool
	var secrets, files []string
	cmd := &cobra.Command{Use: "submit FILE", Short: "Submit a scenario (.json, or text: one step per line)", Args: cobra.ExactArgs(1),
		Example: "  webpilot submit shop.txt --base http://127.0.0.1:8090 --secret PASSWORD=env:SHOP_PASSWORD --watch\n" +
			"  webpilot submit upload.txt --file invoice.pdf=./fixtures/invoice.pdf",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := parseSecrets(secrets)
			if err != nil {
				return err
			}
			return submitCmd(g.conn(), args[0], base, project, follow, s, files, out, g.json)
		}}
	cmd.Flags().StringArrayVar(&files, "file", nil,
		"NAME=PATH: a file upload steps may set on file inputs, as NAME (repeatable; text scenarios may also say \"file: NAME=PATH\")")
	cmd.Flags().StringVar(&base, "base", "", "base URL (overrides the file's)")
	cmd.Flags().StringVar(&project, "project", "", "also write the test into this uploaded project, in its idiom (its page objects and fixtures), and propose the version once it passes")
	cmd.Flags().BoolVar(&follow, "watch", false, "follow the job until it ends, then print a summary")
	secretFlag(cmd, &secrets)
	return cmd
}

// secretFlag adds the repeatable --secret flag.
func secretFlag(cmd *cobra.Command, into *[]string) {
	cmd.Flags().StringArrayVar(into, "secret", nil,
		"NAME=env:VAR or NAME=file:PATH: a secret for {{NAME}}, typed into fields but never shown, stored or logged in the clear (repeatable)")
}

// jobCommand is a command on one job by id.
func jobCommand(g *globals, out io.Writer, name, short string) *cobra.Command {
	return &cobra.Command{Use: name + " JOB_ID", Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := tenantKey()
			if err != nil {
				return err
			}
			return jobAction(g.conn(), key, name, args[0], out, g.json)
		}}
}

func jobsCommand(g *globals, out io.Writer) *cobra.Command {
	var limit int
	var after string
	cmd := &cobra.Command{Use: "jobs", Short: "List your jobs, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := tenantKey()
			if err != nil {
				return err
			}
			return jobsList(g.conn(), key, limit, after, out, g.json)
		}}
	cmd.Flags().IntVar(&limit, "limit", 20, "jobs per page (1-100)")
	cmd.Flags().StringVar(&after, "after", "", "the page after this job id (printed as next)")
	return cmd
}

func suiteCommand(g *globals, out io.Writer) *cobra.Command {
	s := &cobra.Command{Use: "suite", Short: "Replay stored tests (run) or replay and repair them (repair) as one bulk job"}
	for _, kind := range []client.Kind{client.KindSuiteRun, client.KindSuiteRepair} {
		var tags, tests, secrets []string
		var autoAccept, follow bool
		var maxCredits float64
		var project, patch, baseURL string
		name, short := "run", "Replay stored tests (all, by tag, or listed) at 0 tokens"
		if kind == client.KindSuiteRepair {
			name, short = "repair", "Replay and repair them: drift healed, regressions reported with evidence"
		}
		cmd := &cobra.Command{Use: name, Short: short, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if project != "" {
					o := projectJobOptions{baseURL: baseURL, patch: patch, secrets: secrets, autoAccept: autoAccept, follow: follow}
					_, err := projectJob(g.conn(), client.KindProjectRepair, project, o, out, g.json)
					return err
				}
				if patch != "" {
					return fmt.Errorf("--patch needs --project: a stored test's repair is proposed as its next version (webpilot test diff)")
				}
				sec, err := parseSecrets(secrets)
				if err != nil {
					return err
				}
				return suiteCmd(g.conn(), kind, tags, tests, autoAccept, maxCredits, follow, sec, out, g.json)
			}}
		cmd.Flags().StringSliceVar(&tags, "tag", nil, "the tests carrying this tag (repeatable, or comma-separated)")
		cmd.Flags().StringSliceVar(&tests, "test", nil, "this test id (repeatable, or comma-separated)")
		cmd.Flags().BoolVar(&follow, "watch", false, "follow the run test by test until it ends")
		secretFlag(cmd, &secrets)
		if kind == client.KindSuiteRepair {
			cmd.Flags().BoolVar(&autoAccept, "auto-accept", false, "make each verified repair its test's script at once")
			cmd.Flags().Float64Var(&maxCredits, "max-credits", 0, "the credit budget of the whole run (default: one job's hold per test)")
			cmd.Flags().StringVar(&project, "project", "", "repair this uploaded project (webpilot project upload) instead of stored tests")
			cmd.Flags().StringVar(&patch, "patch", "", "with --project: wait for the repair and write its verified patch here (git apply takes it)")
			cmd.Flags().StringVar(&baseURL, "base-url", "", "with --project: every test's baseURL")
		}
		s.AddCommand(cmd)
	}
	return s
}

func testCommand(g *globals, out io.Writer) *cobra.Command {
	t := &cobra.Command{Use: "test", Short: "Stored tests and their versions"}
	t.AddCommand(
		&cobra.Command{Use: "list", Short: "The stored tests and their last verdict", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error { return testList(g.conn(), out, g.json) }},
		&cobra.Command{Use: "show TEST_ID", Short: "A test's script and its versions", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error { return testShow(g.conn(), args[0], out, g.json) }},
		&cobra.Command{Use: "diff TEST_ID VERSION", Short: "The unified diff a version proposes", Args: cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error { return testDiff(g.conn(), args[0], args[1], out) }},
		&cobra.Command{Use: "accept TEST_ID VERSION", Short: "Make a proposed version the test's script", Args: cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				return testDecide(g.conn(), "accept", args[0], args[1], out, g.json)
			}},
		&cobra.Command{Use: "reject TEST_ID VERSION", Short: "Reject a proposed version", Args: cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				return testDecide(g.conn(), "reject", args[0], args[1], out, g.json)
			}},
		testProjectCommand(g, out),
	)
	return t
}

// testProjectCommand writes stored tests as a project, to be run and
// repaired by the runner as a customer's project is.
func testProjectCommand(g *globals, out io.Writer) *cobra.Command {
	var req client.TestsToProject
	cmd := &cobra.Command{Use: "project", Args: cobra.NoArgs,
		Short: "Write the stored tests as a project (each spec with its steps' manifest) to run and repair with the runner",
		Long: `Write the stored tests (all of them, those with a tag, or those listed) as the current version of a
project: tests/NAME.spec.ts, the accepted spec, with tests/NAME.steps.json beside it. From there
"webpilot project run NAME" runs them with the runner in the sandbox (junit and html reports,
traces) and "webpilot project repair NAME" repairs them. The project is a new one, or one stored
tests were written into before: a project of your own is never overwritten.`,
		RunE: func(cmd *cobra.Command, args []string) error { return testProject(g.conn(), req, out, g.json) }}
	cmd.Flags().StringVar(&req.Project, "project", "", "the project's name (default generated)")
	cmd.Flags().StringSliceVar(&req.Tags, "tag", nil, "only the tests with this tag (repeatable)")
	cmd.Flags().StringSliceVar(&req.TestIDs, "test", nil, "only this test (repeatable)")
	return cmd
}

func testsCommand(g *globals, out io.Writer) *cobra.Command {
	return &cobra.Command{Use: "tests", Short: "The stored tests and their last verdict (test list)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return testList(g.conn(), out, g.json) }}
}

// importCommand is retired with the API's import: a customer's specs are
// uploaded as a project. It stays, hidden, to say where to go.
func importCommand() *cobra.Command {
	return &cobra.Command{Use: "import FILE...", Short: "Retired: upload the specs as a project", Hidden: true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("import is retired: upload the specs' directory as a project, which runs them as written " +
				"(their config, fixtures and page objects) and repairs them: webpilot project upload NAME DIR")
		}}
}

func exploreCommand(g *globals, out io.Writer) *cobra.Command {
	var req client.ExplorationRequest
	var secrets []string
	var follow, plan bool
	cmd := &cobra.Command{Use: "explore URL", Short: "Explore an app toward a goal and report the bugs found", Args: cobra.ExactArgs(1),
		Example: `  webpilot explore http://127.0.0.1:8090/ --goal "check out as a guest" --max-actions 40 --watch`,
		RunE: func(cmd *cobra.Command, args []string) error {
			sec, err := parseSecrets(secrets)
			if err != nil {
				return err
			}
			req.BaseURL, req.Secrets = args[0], sec
			return exploreCmd(g.conn(), req, follow, plan, out, g.json)
		}}
	f := cmd.Flags()
	f.StringVar(&req.Goal, "goal", "", `the journey to explore, e.g. "check out as a guest"`)
	f.StringArrayVar(&req.Journeys, "journey", nil, "explore several journeys, one child job each (repeatable; instead of --goal)")
	f.StringSliceVar(&req.Scope, "scope", nil, "a path prefix the exploration may visit (repeatable; default: the whole host)")
	f.StringSliceVar(&req.Safety.Deny, "deny", nil, "a word that keeps the exploration from clicking an element naming it (repeatable)")
	f.StringSliceVar(&req.Safety.Allow, "allow", nil, "a default deny word the exploration may click after all (repeatable)")
	f.IntVar(&req.Budget.MaxActions, "max-actions", 0, "actions at most (default 60)")
	f.IntVar(&req.Budget.MaxMinutes, "max-minutes", 0, "minutes at most (default 10)")
	f.Float64Var(&req.Budget.MaxCredits, "max-credits", 0, "credits at most (the job's hold)")
	f.BoolVar(&follow, "watch", false, "follow the exploration finding by finding until it ends")
	f.BoolVar(&plan, "plan", false, "follow the exploration, then print the test plans it suggests (see webpilot plan)")
	secretFlag(cmd, &secrets)
	return cmd
}

func planCommand(g *globals, out io.Writer) *cobra.Command {
	c := &cobra.Command{Use: "plan", Short: "Test plans an exploration suggests, and making one a stored test"}
	c.AddCommand(&cobra.Command{Use: "list JOB_ID", Short: "An exploration's test plans, numbered", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return plansCmd(g.conn(), args[0], out) }})
	var name string
	var follow bool
	accept := &cobra.Command{Use: "accept JOB_ID N", Short: "Generate plan N of an exploration into a stored test (a scenario job)",
		Args: cobra.ExactArgs(2), Example: `  webpilot plan accept 7d0c… 2 --watch`,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return fmt.Errorf("plan number %q: %w", args[1], err)
			}
			return planAcceptCmd(g.conn(), args[0], n, name, follow, out, g.json)
		}}
	accept.Flags().StringVar(&name, "name", "", "the stored test's name (default: the plan's)")
	accept.Flags().BoolVar(&follow, "watch", false, "follow the scenario job until it ends")
	c.AddCommand(accept)
	return c
}

func findingsCommand(g *globals, out io.Writer) *cobra.Command {
	return &cobra.Command{Use: "findings JOB_ID", Short: "An exploration's findings, their evidence and reproductions", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return findingsCmd(g.conn(), args[0], out, g.json) }}
}

func cacheCommand(g *globals, out io.Writer) *cobra.Command {
	c := &cobra.Command{Use: "cache", Short: "The steps re-runs take without the model"}
	for _, action := range []string{"list", "clear"} {
		var origin string
		short := "List the cached steps"
		if action == "clear" {
			short = "Forget cached steps"
		}
		cmd := &cobra.Command{Use: action, Short: short, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				return cacheCmd(g.conn(), action, origin, out, g.json)
			}}
		cmd.Flags().StringVar(&origin, "origin", "", "only the entries of this app (scheme://host[:port])")
		c.AddCommand(cmd)
	}
	return c
}
