package mcpserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reelay/reelay/api"
)

// toolOnly are the publish tool's arguments that are not fields of the REST body: the local
// files (stdio), and the Idempotency-Key and Prefer: wait headers.
var toolOnly = []string{"idempotency_key", "thumbnail_path", "video_path", "wait_seconds"}

// TestPublishSchemaMirrorsTheContract: the publish tool takes the fields of the contract's
// PublishRequest, every per-platform object with exactly its fields, and the same enums, so
// that a field added to the API and not to the tool (or the reverse) fails here.
func TestPublishSchemaMirrorsTheContract(t *testing.T) {
	doc, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	rest := doc.Components.Schemas["PublishRequest"].Value
	for _, local := range []bool{false, true} {
		tool := toolDefinitions(local)[ToolPublishPost].InputSchema.(*jsonschema.Schema)
		t.Run(fmt.Sprintf("local files %v", local), func(t *testing.T) {
			want := slices.Sorted(maps.Keys(rest.Properties))
			var got []string
			for name := range tool.Properties {
				if !slices.Contains(toolOnly, name) {
					got = append(got, name)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("publish arguments %v, contract fields %v", got, want)
			}
			for name, ref := range rest.Properties {
				compare(t, name, ref.Value, tool.Properties[name])
			}
			// Every argument, down to the platform objects' fields, says what it is.
			for name, p := range tool.Properties {
				if p.Description == "" {
					t.Errorf("%s has no description", name)
				}
				for field, fp := range p.Properties {
					if fp.Description == "" {
						t.Errorf("%s.%s has no description", name, field)
					}
				}
			}
		})
	}
}

// compare checks one property: its nested fields (platform objects), its enum, or its items'.
func compare(t *testing.T, name string, rest *openapi3.Schema, tool *jsonschema.Schema) {
	t.Helper()
	if rest.Type.Is("object") {
		want := slices.Sorted(maps.Keys(rest.Properties))
		got := slices.Sorted(maps.Keys(tool.Properties))
		if !slices.Equal(got, want) {
			t.Errorf("%s: tool fields %v, contract fields %v", name, got, want)
		}
		for field, ref := range rest.Properties {
			if p, ok := tool.Properties[field]; ok {
				compare(t, name+"."+field, ref.Value, p)
			}
		}
		return
	}
	if rest.Items != nil {
		compare(t, name+"[]", rest.Items.Value, tool.Items)
		return
	}
	if !slices.Equal(enumStrings(rest.Enum), enumStrings(tool.Enum)) {
		t.Errorf("%s: tool enum %v, contract enum %v", name, tool.Enum, rest.Enum)
	}
}

func enumStrings(values []any) []string {
	var out []string
	for _, v := range values {
		out = append(out, fmt.Sprint(v))
	}
	slices.Sort(out)
	return out
}

// TestAnalyticsSchemaMirrorsTheContract: reelay_get_analytics takes the overview's query
// parameters under their REST names, plus sync.
func TestAnalyticsSchemaMirrorsTheContract(t *testing.T) {
	doc, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Value("/analytics/overview").Get
	var want []string
	params := map[string]*openapi3.Parameter{}
	for _, p := range op.Parameters {
		want = append(want, p.Value.Name)
		params[p.Value.Name] = p.Value
	}
	slices.Sort(want)
	tool := toolDefinitions(false)[ToolGetAnalytics].InputSchema.(*jsonschema.Schema)
	got := slices.DeleteFunc(slices.Sorted(maps.Keys(tool.Properties)), func(s string) bool { return s == "sync" })
	if !slices.Equal(got, want) {
		t.Fatalf("analytics arguments %v, contract parameters %v", got, want)
	}
	if e := params["platform"].Schema.Value.Enum; !slices.Equal(enumStrings(e), enumStrings(tool.Properties["platform"].Enum)) {
		t.Errorf("platform enum %v, contract %v", tool.Properties["platform"].Enum, e)
	}
}

// TestDescriptionsPerTransport: the local files are offered over stdio and said to be
// unavailable over HTTP.
func TestDescriptionsPerTransport(t *testing.T) {
	local := toolDefinitions(true)[ToolPublishPost]
	remote := toolDefinitions(false)[ToolPublishPost]
	for _, arg := range []string{"video_path", "thumbnail_path"} {
		if d := local.InputSchema.(*jsonschema.Schema).Properties[arg].Description; !strings.Contains(d, "file on this computer") {
			t.Errorf("stdio %s: %s", arg, d)
		}
		if d := remote.InputSchema.(*jsonschema.Schema).Properties[arg].Description; !strings.Contains(d, "Not available") {
			t.Errorf("HTTP %s: %s", arg, d)
		}
	}
	if !strings.Contains(local.Description, "or video_path") || strings.Contains(remote.Description, "or video_path") {
		t.Errorf("descriptions:\nstdio: %s\nHTTP: %s", local.Description, remote.Description)
	}
}
