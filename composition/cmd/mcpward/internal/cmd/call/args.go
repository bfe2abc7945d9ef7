package call

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/core/catalog"
)

// readArgs resolves --args: "@PATH" is the file's content, "-" what
// stdin holds, anything else the JSON as given. A file or stdin larger
// than catalog.MaxArgumentBytes is refused (a usage error); no error
// ever quotes the content.
func readArgs(s string, stdin io.Reader) (string, error) {
	var r io.Reader
	what := ""
	switch {
	case s == "-":
		if stdin == nil {
			return "", cmdutil.FlagErrorf("--args -: no standard input to read")
		}
		r, what = stdin, "standard input"
	case strings.HasPrefix(s, "@"):
		f, err := os.Open(s[1:])
		if err != nil {
			return "", cmdutil.FlagErrorf("--args @FILE: the file cannot be read")
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return "", cmdutil.FlagErrorf("--args @FILE: not a regular file")
		}
		r, what = f, "the file"
	default:
		return s, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, catalog.MaxArgumentBytes+1))
	if err != nil {
		return "", cmdutil.FlagErrorf("--args: %s cannot be read", what)
	}
	if len(b) > catalog.MaxArgumentBytes {
		return "", cmdutil.FlagErrorf("--args: %s holds more than %d bytes", what, catalog.MaxArgumentBytes)
	}
	return string(b), nil
}

// mergeArgs adds the --arg KEY=VALUE pairs to the arguments object base
// ("" is {}), each typed by the tool's input schema: a property the
// schema types as a string (alone or among others), or does not type or
// declare, takes VALUE as a string; any other type takes VALUE as JSON
// (42, true, null, [1,2], {"a":1}). A later pair of the same key wins,
// and a pair wins over --args. Errors are usage errors naming the key,
// never the value.
func mergeArgs(base string, pairs []string, schema json.RawMessage) (string, error) {
	if len(pairs) == 0 {
		return base, nil
	}
	obj := map[string]json.RawMessage{}
	if strings.TrimSpace(base) != "" {
		d := json.NewDecoder(strings.NewReader(base))
		if err := d.Decode(&obj); err != nil || obj == nil {
			return "", cmdutil.FlagErrorf("--arg adds to --args, which must then be a JSON object")
		}
	}
	types := propertyTypes(schema)
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return "", cmdutil.FlagErrorf("--arg takes KEY=VALUE")
		}
		t, declared := types[k]
		if !declared || t == nil || t["string"] {
			b, _ := json.Marshal(v)
			obj[k] = b
			continue
		}
		if !json.Valid([]byte(v)) {
			return "", cmdutil.FlagErrorf("--arg %q: the tool's schema expects %s, given as JSON (a string value is not)", k, typeWords(t))
		}
		obj[k] = json.RawMessage(bytes.TrimSpace([]byte(v)))
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return "", cmdutil.FlagErrorf("--arg: the arguments cannot be encoded")
	}
	return string(out), nil
}

// propertyTypes reads the top-level properties of an input schema and the
// type names each declares (nil when it declares none).
func propertyTypes(schema json.RawMessage) map[string]map[string]bool {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	out := map[string]map[string]bool{}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for k, p := range s.Properties {
		var one string
		var many []string
		switch {
		case json.Unmarshal(p.Type, &one) == nil && one != "":
			out[k] = map[string]bool{one: true}
		case json.Unmarshal(p.Type, &many) == nil && len(many) > 0:
			out[k] = map[string]bool{}
			for _, t := range many {
				out[k][t] = true
			}
		default:
			out[k] = nil
		}
	}
	return out
}

// typeWords names a type set for a usage error ("number or null").
func typeWords(t map[string]bool) string {
	var w []string
	for _, n := range []string{"object", "array", "number", "integer", "boolean", "null"} {
		if t[n] {
			w = append(w, n)
		}
	}
	if len(w) == 0 {
		return "a JSON value"
	}
	return strings.Join(w, " or ")
}
