package metasim

// What the Instagram, Threads and Facebook simulators share of figures and comments: the
// metric parameter of the insights edges and the rows they answer
// (data[{name, period, values[{value}], title, description, id}]), field selection with
// expansion of nested objects and inline list edges (from{id,username}, replies{...}), and
// the stable numeric ids of audience comments.

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Metrics reads the comma-separated metric parameter of an insights read; required says
// whether Graph refuses a read without one.
func Metrics(p url.Values, required bool) ([]string, *Error) {
	var names []string
	for _, m := range strings.Split(p.Get("metric"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			names = append(names, m)
		}
	}
	if len(names) == 0 && required {
		return nil, Err(http.StatusBadRequest, 100, 0, "(#100) The parameter metric is required")
	}
	return names, nil
}

// Insight is one lifetime metric of an insights answer for the object objectID, read on
// its edge ("insights", "video_insights").
func Insight(objectID, edge, name, title, description string, value any) map[string]any {
	return map[string]any{
		"name": name, "period": "lifetime", "values": []any{map[string]any{"value": value}},
		"title": title, "description": description,
		"id": objectID + "/" + edge + "/" + name + "/lifetime",
	}
}

// List is a list edge held among a node's fields (the replies of an Instagram comment):
// selected as {"data": [...]}, each row with the subfields the expansion asks for, or its id.
type List struct {
	Type string
	Rows []map[string]any
}

// Select keeps the requested fields of a node (def when fields is empty), always with its
// id. A field holding an object answers the subfields its expansion asks for (from{id,name}),
// or the whole object; a field holding a List answers its rows. An unknown field, or the
// expansion of a plain value, is Graph's error 100; a field whose value is nil is known but
// left out, as Graph leaves out empty fields.
func Select(all map[string]any, typ, fields, def string) (map[string]any, *Error) {
	if fields == "" {
		fields = def
	}
	want, gerr := ParseFields(fields)
	if gerr != nil {
		return nil, gerr
	}
	return metaSelectFields(all, typ, want)
}

func metaSelectFields(all map[string]any, typ string, want []Field) (map[string]any, *Error) {
	out := map[string]any{}
	if id, ok := all["id"]; ok {
		out["id"] = id
	}
	for _, f := range want {
		v, ok := all[f.Name]
		if !ok {
			return nil, Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Tried accessing nonexisting field (%s) on node type (%s)", f.Name, typ))
		}
		switch v := v.(type) {
		case nil:
		case map[string]any:
			if !f.Expanded {
				out[f.Name] = v
				continue
			}
			sub, gerr := metaSelectFields(v, f.Name, f.Sub)
			if gerr != nil {
				return nil, gerr
			}
			out[f.Name] = sub
		case List:
			sub := []Field{{Name: "id"}}
			if f.Expanded {
				sub = f.Sub
			}
			data := []any{}
			for _, r := range v.Rows {
				row, gerr := metaSelectFields(r, v.Type, sub)
				if gerr != nil {
					return nil, gerr
				}
				data = append(data, row)
			}
			out[f.Name] = map[string]any{"data": data}
		default:
			if f.Expanded {
				return nil, Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Field %s of node type (%s) has no subfields", f.Name, typ))
			}
			out[f.Name] = v
		}
	}
	return out, nil
}

// DerivedID is a numeric id in [base, base+span) drawn from parts: the same parts always
// give the same id, so an audience comment keeps its id on every read.
func DerivedID(base, span uint64, parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(base+h.Sum64()%span, 10)
}

// Bool reads a boolean parameter (def when absent); ok is false for anything but
// true/false/1/0.
func Bool(p url.Values, name string, def bool) (v, ok bool) {
	s := p.Get(name)
	if s == "" {
		return def, true
	}
	return ParseBool(s)
}
