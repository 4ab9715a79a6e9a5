package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeAPIVersions: the README's table of the API versions reelay speaks says what the
// descriptions say (the version and the day it was checked), and has a row for every versioned
// platform and none for another. The table is written by hand; this keeps it from drifting.
func TestReadmeAPIVersions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "The API versions reelay speaks")
	if !ok {
		t.Fatal("the README has no table of API versions")
	}
	// The table's rows, after its header and separator, up to the first line that is no row.
	type row struct{ names, version, checked string }
	var rows []row
	started := false
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 4 {
			t.Fatalf("row %q has %d cells, want 4", line, len(cells))
		}
		if cells[0] == "platform" || strings.Trim(cells[0], "-") == "" {
			continue
		}
		rows = append(rows, row{cells[0], cells[1], cells[2]})
	}

	covered := map[int]bool{}
	for _, d := range descriptions {
		if d.API.Version == "" {
			continue
		}
		found := false
		for i, r := range rows {
			if !listNames(r.names, d.Name) {
				continue
			}
			found, covered[i] = true, true
			if !strings.Contains(r.version, "`"+d.API.Version+"`") {
				t.Errorf("%s: the README says %s, the description %s", d.Name, r.version, d.API.Version)
			}
			if r.checked != d.API.Checked {
				t.Errorf("%s: the README says checked %s, the description %s", d.Name, r.checked, d.API.Checked)
			}
		}
		if !found {
			t.Errorf("%s speaks API version %s, which the README's table does not list", d.Name, d.API.Version)
		}
	}
	for i, r := range rows {
		if !covered[i] {
			t.Errorf("the README's row %q names no platform with a versioned API", r.names)
		}
	}
}

// listNames reports whether names, platform names separated by commas, holds name.
func listNames(names, name string) bool {
	for _, n := range strings.Split(names, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}
