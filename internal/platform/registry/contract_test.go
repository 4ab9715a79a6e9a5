package registry

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/reelay/reelay/api"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// TestOptionsMatchTheContract holds each platform's options type to its object in
// api/openapi.yaml (<Name>Options): the same fields, each a string or a boolean as the
// contract says, every value of a field's enum accepted by the type's Check and a value
// outside it refused, naming the field. The client's copies and the MCP tool's schema are
// held to the same document by their own tests, so a field added to one platform's options
// and not to the contract fails here.
func TestOptionsMatchTheContract(t *testing.T) {
	doc, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range descriptions {
		t.Run(d.ID, func(t *testing.T) {
			if d.NewOptions == nil {
				t.Fatal("the description has no options type")
			}
			ref, ok := doc.Components.Schemas[d.Name+"Options"]
			if !ok {
				t.Fatalf("the contract has no schema %sOptions", d.Name)
			}
			schema := ref.Value
			typ := reflect.TypeOf(d.NewOptions()).Elem()
			fields := map[string]reflect.Type{}
			for _, sf := range reflect.VisibleFields(typ) {
				name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
				if !sf.Anonymous {
					fields[name] = sf.Type
				}
			}
			for name := range schema.Properties {
				if _, ok := fields[name]; !ok {
					t.Errorf("the contract's %s.%s has no field in %s", d.ID, name, typ)
				}
			}
			for name, ft := range fields {
				prop, ok := schema.Properties[name]
				if !ok {
					t.Errorf("%s's field %s is not in the contract's %sOptions", typ, name, d.Name)
					continue
				}
				isBool := ft.Kind() == reflect.Bool || ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Bool
				if want := prop.Value.Type.Is("boolean"); isBool != want {
					t.Errorf("%s.%s: the type's field is %s, the contract's is %v", d.ID, name, ft, prop.Value.Type)
				}
				for _, v := range prop.Value.Enum {
					if f := check(t, d, name, v); len(f) > 0 {
						t.Errorf("%s.%s = %v, a value of the contract's enum, is refused: %v", d.ID, name, v, f)
					}
				}
				if len(prop.Value.Enum) > 0 {
					if f := check(t, d, name, "not-a-choice"); f[d.ID+"."+name] == "" {
						t.Errorf("%s.%s = not-a-choice is not refused naming the field: %v", d.ID, name, f)
					}
				}
			}
		})
	}
}

// check decodes {field: v} into a new object of the platform and returns what its Check says.
func check(t *testing.T, d platform.Description, field string, v any) apierr.Fields {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{field: v})
	o := d.NewOptions()
	if err := json.Unmarshal(raw, o); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	var f apierr.Fields
	d.CheckOptions(&f, o)
	return f
}
