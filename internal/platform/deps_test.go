package platform_test

import (
	"os/exec"
	"strings"
	"testing"
)

// forbiddenForProviders are, with the simulators (isSimulator), what a provider package must
// not depend on, directly or through another package: the publisher, the store and the
// simulators are the service around the providers, and the drivers, the job queue and the blob
// storage come with them. A provider is an HTTP client of one platform; everything it needs
// from reelay is in internal/provider.
var forbiddenForProviders = []string{
	"github.com/reelay/reelay/internal/publish",
	"github.com/reelay/reelay/internal/store",
	"github.com/reelay/reelay/internal/analytics",
	"github.com/reelay/reelay/internal/inbox",
	"github.com/reelay/reelay/internal/connect",
	"github.com/reelay/reelay/internal/media",
	"github.com/riverqueue/",
	"github.com/jackc/pgx",
	"modernc.org/sqlite",
	"gocloud.dev",
}

// notProviders are the packages under internal/platform that are no provider, besides the
// simulators: the helpers of the providers' tests, which drive them, and the shape of the
// simulators' data.
var notProviders = []string{
	"github.com/reelay/reelay/internal/platform/sim/simstate",
	"github.com/reelay/reelay/internal/platform/providertest",
}

// isSimulator reports whether the package at path is a simulator or part of one: the core at
// internal/platform/sim and the packages below it, and each platform's simulator, a package
// whose name ends in "sim" beside its provider (internal/platform/mastodon/mastodonsim).
// simstate is the exception: it is the shape of the simulators' data, which the store keeps
// and housekeeping deletes, and depends on nothing of theirs.
func isSimulator(path string) bool {
	const platformDir = "github.com/reelay/reelay/internal/platform/"
	if path == platformDir+"sim/simstate" {
		return false
	}
	return hasAnyPrefix(path, []string{platformDir + "sim"}) ||
		(strings.HasPrefix(path, platformDir) && strings.HasSuffix(path, "sim"))
}

// TestProvidersDependOnTheContractOnly: no provider package (nor a helper they share, nor the
// contract itself) pulls in the publisher, the store, the simulators or what those bring along.
func TestProvidersDependOnTheContractOnly(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...", "../provider").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || hasAnyPrefix(fields[0], notProviders) || isSimulator(fields[0]) {
			continue
		}
		checked++
		var found []string
		for _, dep := range fields[1:] {
			if isSimulator(dep) {
				found = append(found, dep)
			}
		}
		for _, f := range forbiddenForProviders {
			for _, dep := range fields[1:] {
				if hasAnyPrefix(dep, []string{f}) {
					found = append(found, dep)
					break
				}
			}
		}
		if len(found) > 0 {
			t.Errorf("%s depends on %s", fields[0], strings.Join(found, ", "))
		}
	}
	if checked < 13 {
		t.Fatalf("checked %d packages, want at least the twelve providers and the contract:\n%s", checked, out)
	}
}

// serviceWithoutSimulators are the production packages of the service that must not depend on
// any simulator, directly or through another package: the simulators are mounted by the
// sandbox's wiring (internal/app, internal/httpapi's sandbox, simhost), and what the service
// does with their state (the store keeps it, housekeeping deletes it) goes through simstate.
var serviceWithoutSimulators = []string{"../publish", "../store", "../connect", "../analytics", "../inbox"}

// TestServiceDoesNotDependOnTheSimulators: no package of serviceWithoutSimulators (their
// non-test code: go list's Deps leaves the tests out) pulls in a simulator.
func TestServiceDoesNotDependOnTheSimulators(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	out, err := exec.Command(gobin, append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, serviceWithoutSimulators...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		checked++
		for _, dep := range fields[1:] {
			if isSimulator(dep) {
				t.Errorf("%s depends on the simulator %s", fields[0], dep)
			}
		}
	}
	if checked != len(serviceWithoutSimulators) {
		t.Fatalf("checked %d packages, want %d:\n%s", checked, len(serviceWithoutSimulators), out)
	}
}

func hasAnyPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
