package docs_test

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"
)

// TestTheCIExamplesRunAsWritten: the GitHub Actions workflow passes
// actionlint and the GitLab CI file parses into a job whose artifacts
// and junit report are the files the CLI writes; every webpilot command
// in them is the CLI's, with flags it has; the CLI installs from this
// module's path.
func TestTheCIExamplesRunAsWritten(t *testing.T) {
	t.Parallel()
	bin := cli(t)
	const workflow, gitlab = "../examples/ci/github-actions.yml", "../examples/ci/gitlab-ci.yml"

	raw, err := os.ReadFile(workflow)
	if err != nil {
		t.Fatal(err)
	}
	lint, err := actionlint.NewLinter(os.Stderr, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	problems, err := lint.Lint(workflow, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("actionlint: %s:%d:%d: %s [%s]", workflow, p.Line, p.Column, p.Message, p.Kind)
	}
	var gh struct {
		Jobs map[string]struct {
			Steps []struct {
				Run  string            `yaml:"run"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &gh); err != nil {
		t.Fatal(err)
	}
	var ghRuns, kept []string
	for _, j := range gh.Jobs {
		for _, st := range j.Steps {
			if st.Run != "" {
				ghRuns = append(ghRuns, st.Run)
			}
			if strings.HasPrefix(st.Uses, "actions/upload-artifact@") {
				kept = append(kept, strings.Fields(st.With["path"])...)
			}
		}
	}
	checkCISteps(t, bin, workflow, ghRuns, kept, "")

	raw, err = os.ReadFile(gitlab)
	if err != nil {
		t.Fatal(err)
	}
	var gl map[string]yaml.Node // stages, and the jobs
	if err := yaml.Unmarshal(raw, &gl); err != nil {
		t.Fatalf("%s does not parse: %v", gitlab, err)
	}
	node, ok := gl["webpilot-e2e"]
	var job struct {
		Script    []string `yaml:"script"`
		Before    []string `yaml:"before_script"`
		Artifacts struct {
			When    string   `yaml:"when"`
			Paths   []string `yaml:"paths"`
			Reports struct {
				JUnit string `yaml:"junit"`
			} `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	if !ok || node.Decode(&job) != nil || len(job.Script) == 0 {
		t.Fatalf("%s has no webpilot-e2e job with a script", gitlab)
	}
	if job.Artifacts.When != "always" {
		t.Errorf("%s keeps its artifacts %q: a failing run's reports are the ones read", gitlab, job.Artifacts.When)
	}
	checkCISteps(t, bin, gitlab, append(job.Before, job.Script...), job.Artifacts.Paths, job.Artifacts.Reports.JUnit)
}

// checkCISteps checks a CI file's steps: they install the CLI from this
// module, each webpilot command runs, and the reports and the patch it
// writes are among what the job keeps (junit, when set, is the file its
// CI shows as the test report).
func checkCISteps(t *testing.T, bin, file string, steps, kept []string, junit string) {
	t.Helper()
	installs, commands := false, 0
	for _, step := range steps {
		line := strings.Join(strings.Fields(step), " ")
		if line == "go install github.com/webpilot/webpilot/cmd/webpilot@latest" {
			installs = true
		}
		if !strings.HasPrefix(line, "webpilot ") {
			continue
		}
		commands++
		commandRuns(t, bin, line, file)
		args := words(line)
		for _, flag := range []string{"--junit", "--html", "--traces", "--patch"} {
			i := slices.Index(args, flag)
			if i < 0 || i+1 == len(args) {
				t.Errorf("%s: `%s` writes no %s", file, line, flag)
				continue
			}
			to := path.Clean(args[i+1])
			if !slices.ContainsFunc(kept, func(k string) bool { k = path.Clean(k); return to == k || strings.HasPrefix(to, k+"/") }) {
				t.Errorf("%s: %s %s is not among the artifacts kept (%v)", file, flag, to, kept)
			}
			if flag == "--junit" && junit != "" && path.Clean(junit) != to {
				t.Errorf("%s: the junit report shown is %s, the CLI writes %s", file, junit, to)
			}
		}
	}
	if !installs || commands == 0 {
		t.Errorf("%s: installs the CLI %v, runs %d webpilot commands", file, installs, commands)
	}
}
