package sim

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

// metaMetrics reads the comma-separated metric parameter of an insights read; required says
// whether Graph refuses a read without one.
func metaMetrics(p url.Values, required bool) ([]string, *igError) {
	var names []string
	for _, m := range strings.Split(p.Get("metric"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			names = append(names, m)
		}
	}
	if len(names) == 0 && required {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The parameter metric is required")
	}
	return names, nil
}

// metaInsight is one lifetime metric of an insights answer for the object objectID, read on
// its edge ("insights", "video_insights").
func metaInsight(objectID, edge, name, title, description string, value any) map[string]any {
	return map[string]any{
		"name": name, "period": "lifetime", "values": []any{map[string]any{"value": value}},
		"title": title, "description": description,
		"id": objectID + "/" + edge + "/" + name + "/lifetime",
	}
}

// metaList is a list edge held among a node's fields (the replies of an Instagram comment):
// selected as {"data": [...]}, each row with the subfields the expansion asks for, or its id.
type metaList struct {
	typ  string
	rows []map[string]any
}

// metaSelect keeps the requested fields of a node (def when fields is empty), always with its
// id. A field holding an object answers the subfields its expansion asks for (from{id,name}),
// or the whole object; a field holding a metaList answers its rows. An unknown field, or the
// expansion of a plain value, is Graph's error 100; a field whose value is nil is known but
// left out, as Graph leaves out empty fields.
func metaSelect(all map[string]any, typ, fields, def string) (map[string]any, *igError) {
	if fields == "" {
		fields = def
	}
	want, gerr := igParseFields(fields)
	if gerr != nil {
		return nil, gerr
	}
	return metaSelectFields(all, typ, want)
}

func metaSelectFields(all map[string]any, typ string, want []igField) (map[string]any, *igError) {
	out := map[string]any{}
	if id, ok := all["id"]; ok {
		out["id"] = id
	}
	for _, f := range want {
		v, ok := all[f.name]
		if !ok {
			return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Tried accessing nonexisting field (%s) on node type (%s)", f.name, typ))
		}
		switch v := v.(type) {
		case nil:
		case map[string]any:
			if !f.expanded {
				out[f.name] = v
				continue
			}
			sub, gerr := metaSelectFields(v, f.name, f.sub)
			if gerr != nil {
				return nil, gerr
			}
			out[f.name] = sub
		case metaList:
			sub := []igField{{name: "id"}}
			if f.expanded {
				sub = f.sub
			}
			data := []any{}
			for _, r := range v.rows {
				row, gerr := metaSelectFields(r, v.typ, sub)
				if gerr != nil {
					return nil, gerr
				}
				data = append(data, row)
			}
			out[f.name] = map[string]any{"data": data}
		default:
			if f.expanded {
				return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Field %s of node type (%s) has no subfields", f.name, typ))
			}
			out[f.name] = v
		}
	}
	return out, nil
}

// metaDerivedID is a numeric id in [base, base+span) drawn from parts: the same parts always
// give the same id, so an audience comment keeps its id on every read.
func metaDerivedID(base, span uint64, parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(base+h.Sum64()%span, 10)
}

// metaBool reads a boolean parameter (def when absent); ok is false for anything but
// true/false/1/0.
func metaBool(p url.Values, name string, def bool) (v, ok bool) {
	s := p.Get(name)
	if s == "" {
		return def, true
	}
	return igBool(s)
}
