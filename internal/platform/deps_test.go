package platform_test

import (
	"os/exec"
	"strings"
	"testing"
)

// forbiddenForProviders are what a provider package must not depend on, directly or through
// another package: the publisher, the store and the simulators are the service around the
// providers, and the drivers, the job queue and the blob storage come with them. A provider is
// an HTTP client of one platform; everything it needs from reelay is in internal/provider.
var forbiddenForProviders = []string{
	"github.com/reelay/reelay/internal/publish",
	"github.com/reelay/reelay/internal/store",
	"github.com/reelay/reelay/internal/platform/sim",
	"github.com/reelay/reelay/internal/analytics",
	"github.com/reelay/reelay/internal/inbox",
	"github.com/reelay/reelay/internal/connect",
	"github.com/reelay/reelay/internal/media",
	"github.com/riverqueue/",
	"github.com/jackc/pgx",
	"modernc.org/sqlite",
	"gocloud.dev",
}

// notProviders are the packages under internal/platform that are no provider: the simulators
// and the helpers of the providers' tests, which drive them.
var notProviders = []string{
	"github.com/reelay/reelay/internal/platform/sim",
	"github.com/reelay/reelay/internal/platform/providertest",
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
		if len(fields) == 0 || hasAnyPrefix(fields[0], notProviders) {
			continue
		}
		checked++
		var found []string
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

func hasAnyPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
