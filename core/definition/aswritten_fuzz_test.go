package definition

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/ports"
)

// This file states issue 22's rule as a property over generated
// definitions, not examples: the fingerprint covers the definition as
// written. Any change to what is written (a literal, a variable's name, a
// default, a key, a position, the command, the cwd, the URL, a header's
// name, the filters, ...) changes the fingerprint and the approval review;
// changing only the environment value of a variable whose every stretch is
// secret (a credential-shaped one, or one standing only where credentials
// go) changes neither; changing the value of a variable that feeds a
// non-secret stretch changes the fingerprint.

// awPieces are the bits generated strings are made of: the shapes and
// positions of every attack of issue 22 (credential variables, defaults
// holding code, secret positions, PEM text, shell substitutions, hosts).
var awPieces = []string{
	"npx", "-y", "@scope/server", "python3", "-c", "-m", "mod", "print(1)", "open('x','w').write('y')", "sh",
	"--token", "--token=", "--api-key=", "--no-auth", "--session", "--port=", "Bearer ", "Basic ", "?token=", "&x=", "?a=",
	"API_KEY=", "AUTH_MODE=", "AUTH=", "_authToken=", "//registry.example/:", "https://", "http://", "h.example", "аpple.com",
	"/mcp", ":8443", "@", "u:", "-----BEGIN PRIVATE KEY-----\n", "MIIEowIBAAKCAQEA\n", "import os", ";", "$(id)", " ", "/", ".",
	"literal-one", "literal-two", "ghp_0123456789abcdefghijABCD", "<redacted:0a1b2c3d>", "\\n", "=", "exec srv", " exec srv", "'", "\"",
	"${GITHUB_TOKEN}", "${AWS_SECRET_ACCESS_KEY}", "${RUN_TOKEN:-print(1)}", "${RUN_TOKEN:-}", "${MODE:-none}", "${MODE}",
	"${HOME}", "${HOME:-/h}", "${X:-}", "${X}", "${PORT:-8080}", "${SSH_AUTH_SOCK}", "${API_KEY:-sk-abcdefghijklmnopqrstu}",
	"${UNSET_V:-d}", "${HOST_NAME:-h.example}", "${SERVICE_TOKEN:-s3cr3t}", "${NODE_OPTIONS}",
}

// awVars are the variables the generated definitions use, all set.
var awVars = map[string]string{
	"GITHUB_TOKEN": "ghp_value1", "AWS_SECRET_ACCESS_KEY": "aws_value1", "RUN_TOKEN": "run_value1", "MODE": "fast",
	"HOME": "/home/u", "X": "xval", "PORT": "9000", "SSH_AUTH_SOCK": "/run/agent.sock", "API_KEY": "api_value1",
	"HOST_NAME": "", "SERVICE_TOKEN": "svc_value1", "NODE_OPTIONS": "--max-old-space-size=64",
}

var (
	awEnvKeys    = []string{"API_KEY", "NODE_OPTIONS", "PYTHONPATH", "SSH_AUTH_SOCK", "PLAIN", "DB_PASSWORD", "npm_config_registry", "Token_File"}
	awHeaderKeys = []string{"Authorization", "X-Api-Key", "X-Tenant", "Cookie", "X-Trace"}
)

// awGen reads a definition out of spec, deterministically.
type awGen struct {
	spec []byte
	i    int
	text string
}

func (g *awGen) byte() byte {
	if g.i >= len(g.spec) {
		g.i++
		return byte(g.i * 37)
	}
	b := g.spec[g.i]
	g.i++
	return b
}

func (g *awGen) str(maxPieces int) string {
	n := int(g.byte()) % (maxPieces + 1)
	var b strings.Builder
	for range n {
		c := g.byte()
		if c == 255 {
			b.WriteString(g.text)
			continue
		}
		b.WriteString(awPieces[int(c)%len(awPieces)])
	}
	return b.String()
}

func (g *awGen) definition() *Definition {
	d := &Definition{Name: "srv", Tier: ports.TierProject, Origin: "/repo/.mcp.json"}
	switch g.byte() % 3 {
	case 0:
		d.Kind = KindHTTP
		d.URL = "https://" + g.str(4)
		if n := int(g.byte()) % 4; n > 0 {
			d.Headers = map[string]string{}
			for range n {
				d.Headers[awHeaderKeys[int(g.byte())%len(awHeaderKeys)]] = g.str(3)
			}
		}
		if g.byte()%4 == 0 {
			d.HeadersHelper = []string{"/bin/helper", g.str(2)}
		}
		if g.byte()%4 == 0 {
			d.OAuth = &OAuth{ClientID: g.str(1), Scopes: []string{g.str(1)}, CallbackPort: int(g.byte())}
		}
	default:
		d.Kind = KindStdio
		d.Command = g.str(2)
		if d.Command == "" {
			d.Command = "srv"
		}
		for range int(g.byte()) % 5 {
			d.Args = append(d.Args, g.str(3))
		}
		if n := int(g.byte()) % 4; n > 0 {
			d.Env = map[string]string{}
			for range n {
				d.Env[awEnvKeys[int(g.byte())%len(awEnvKeys)]] = g.str(3)
			}
		}
		if g.byte()%3 == 0 {
			d.Cwd = g.str(2)
		}
	}
	if g.byte()%5 == 0 {
		d.IncludeTools = []string{"read"}
	}
	d.RequiresTrustedWorkspace = g.byte()%7 == 0
	return d
}

// awClone deep-copies d.
func awClone(d *Definition) *Definition {
	c := *d
	c.Args = slices.Clone(d.Args)
	c.Env = maps.Clone(d.Env)
	c.Headers = maps.Clone(d.Headers)
	c.HeadersHelper = slices.Clone(d.HeadersHelper)
	c.IncludeTools = slices.Clone(d.IncludeTools)
	c.ExcludeTools = slices.Clone(d.ExcludeTools)
	if d.OAuth != nil {
		o := *d.OAuth
		o.Scopes = slices.Clone(d.OAuth.Scopes)
		c.OAuth = &o
	}
	return &c
}

// awField is a pointer to one string field of a definition.
type awField struct {
	name string
	p    *string
	set  func(string) // for map values
}

// awFields lists d's string fields, in a fixed order.
func awFields(d *Definition) []awField {
	var fs []awField
	fs = append(fs, awField{name: "command", p: &d.Command}, awField{name: "cwd", p: &d.Cwd}, awField{name: "url", p: &d.URL})
	for i := range d.Args {
		fs = append(fs, awField{name: "arg", p: &d.Args[i]})
	}
	for _, k := range slices.Sorted(maps.Keys(d.Env)) {
		v := d.Env[k]
		fs = append(fs, awField{name: "env " + k, p: &v, set: func(s string) { d.Env[k] = s }})
	}
	for _, k := range slices.Sorted(maps.Keys(d.Headers)) {
		v := d.Headers[k]
		fs = append(fs, awField{name: "header " + k, p: &v, set: func(s string) { d.Headers[k] = s }})
	}
	return fs
}

func (f awField) put(s string) {
	*f.p = s
	if f.set != nil {
		f.set(s)
	}
}

// awMutate applies mutation op (with pick and text) to a clone of d and
// returns it, with the variables it needs, or nil when op does not apply.
func awMutate(d *Definition, vars map[string]string, op uint8, pick uint16, text string) (*Definition, map[string]string, string) {
	c := awClone(d)
	v := maps.Clone(vars)
	fields := awFields(c)
	f := fields[int(pick)%len(fields)]
	at := func(s string) int {
		if s == "" {
			return 0
		}
		return int(pick/7) % (len(s) + 1)
	}
	ins := text
	if ins == "" {
		ins = "z"
	}
	switch op % 14 {
	case 0: // insert text into a string field
		s := *f.p
		i := at(s)
		f.put(s[:i] + ins + s[i:])
		return c, v, "insert into " + f.name
	case 1: // delete one byte of a string field
		s := *f.p
		if s == "" {
			return nil, nil, ""
		}
		i := at(s) % len(s)
		f.put(s[:i] + s[i+1:])
		return c, v, "delete from " + f.name
	case 2: // rename a variable; the new one has the same value
		s := *f.p
		parts, bad := matParse(s)
		if bad >= 0 {
			return nil, nil, ""
		}
		for _, p := range parts {
			if p.template {
				nv := p.name + "_B"
				if val, ok := v[p.name]; ok {
					v[nv] = val
				}
				f.put(strings.Replace(s, p.raw, strings.Replace(p.raw, p.name, nv, 1), 1))
				return c, v, "rename variable in " + f.name
			}
		}
		return nil, nil, ""
	case 3: // change a default
		s := *f.p
		parts, bad := matParse(s)
		if bad >= 0 {
			return nil, nil, ""
		}
		for _, p := range parts {
			if p.template && p.hasDefault {
				f.put(strings.Replace(s, p.raw, "${"+p.name+":-"+p.text+ins+"}", 1))
				return c, v, "change default in " + f.name
			}
		}
		return nil, nil, ""
	case 4: // a template replaced by a literal equal to its expansion
		s := *f.p
		parts, bad := matParse(s)
		if bad >= 0 {
			return nil, nil, ""
		}
		for _, p := range parts {
			if p.template {
				val, ok := v[p.name]
				if !ok || val == "" {
					val = p.text
				}
				f.put(strings.Replace(s, p.raw, val, 1))
				return c, v, "template to literal in " + f.name
			}
		}
		return nil, nil, ""
	case 5: // rename a key
		switch {
		case len(c.Env) > 0:
			k := slices.Sorted(maps.Keys(c.Env))[int(pick)%len(c.Env)]
			nk := k + "_2"
			if _, taken := c.Env[nk]; taken {
				return nil, nil, ""
			}
			c.Env[nk] = c.Env[k]
			delete(c.Env, k)
		case len(c.Headers) > 0:
			k := slices.Sorted(maps.Keys(c.Headers))[int(pick)%len(c.Headers)]
			nk := "X-" + k
			if _, taken := c.Headers[nk]; taken {
				return nil, nil, ""
			}
			c.Headers[nk] = c.Headers[k]
			delete(c.Headers, k)
		default:
			return nil, nil, ""
		}
		return c, v, "rename key"
	case 6: // add an argument, env or header entry
		if c.Kind == KindStdio {
			i := int(pick) % (len(c.Args) + 1)
			c.Args = slices.Insert(c.Args, i, text)
			return c, v, "add argument"
		}
		if c.Headers == nil {
			c.Headers = map[string]string{}
		}
		if _, taken := c.Headers["X-Added"]; taken {
			return nil, nil, ""
		}
		c.Headers["X-Added"] = text
		return c, v, "add header"
	case 7: // remove an argument or an entry
		switch {
		case len(c.Args) > 0:
			i := int(pick) % len(c.Args)
			c.Args = slices.Delete(c.Args, i, i+1)
		case len(c.Env) > 0:
			delete(c.Env, slices.Sorted(maps.Keys(c.Env))[int(pick)%len(c.Env)])
		case len(c.Headers) > 0:
			delete(c.Headers, slices.Sorted(maps.Keys(c.Headers))[int(pick)%len(c.Headers)])
		default:
			return nil, nil, ""
		}
		return c, v, "remove an element"
	case 8: // move text between two arguments
		if len(c.Args) < 2 || c.Args[0] == "" {
			return nil, nil, ""
		}
		c.Args[1] = c.Args[0][len(c.Args[0])-1:] + c.Args[1]
		c.Args[0] = c.Args[0][:len(c.Args[0])-1]
		return c, v, "move text between arguments"
	case 9:
		c.Name += "2"
		return c, v, "name"
	case 10:
		c.RequiresTrustedWorkspace = !c.RequiresTrustedWorkspace
		return c, v, "requires trusted workspace"
	case 11:
		if c.IncludeTools == nil {
			c.IncludeTools = []string{}
		} else {
			c.IncludeTools = nil
		}
		return c, v, "include tools"
	case 12:
		if c.Kind != KindStdio {
			return nil, nil, ""
		}
		if c.Cwd == "" {
			c.Cwd = "."
		} else {
			c.Cwd = ""
		}
		return c, v, "cwd set or cleared"
	default:
		c.Refusal = "refused_" + ins
		return c, v, "refusal"
	}
}

func awLookup(vars map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func awReview(t *testing.T, d *Definition) string {
	js, err := json.Marshal(ReviewDefinition(d))
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// awSeed is one seed of FuzzFingerprintAsWritten: a generator spec, and
// the mutation to apply.
type awSeed struct {
	spec []byte
	op   uint8
	pick uint16
	text string
}

type awKV struct {
	key string
	val []string
}

// awSeeds are the seeds: every attack of issue 22 (and the same kinds
// elsewhere), each a definition built through the generator's own spec,
// and the mutation the attack made.
func awSeeds() []awSeed {
	pieces := func(sp []byte, ps ...string) []byte {
		sp = append(sp, byte(len(ps)))
		for _, p := range ps {
			i := slices.Index(awPieces, p)
			if i < 0 {
				panic("not a piece: " + p)
			}
			sp = append(sp, byte(i))
		}
		return sp
	}
	stdio := func(cmd []string, args [][]string, env []awKV, cwd []string) []byte {
		sp := pieces([]byte{1}, cmd...)
		sp = append(sp, byte(len(args)))
		for _, a := range args {
			sp = pieces(sp, a...)
		}
		sp = append(sp, byte(len(env)))
		for _, e := range env {
			sp = pieces(append(sp, byte(slices.Index(awEnvKeys, e.key))), e.val...)
		}
		if cwd != nil {
			sp = pieces(append(sp, 0), cwd...)
		} else {
			sp = append(sp, 1)
		}
		return append(sp, 1, 1)
	}
	http := func(url []string, headers []awKV) []byte {
		sp := pieces([]byte{0}, url...)
		sp = append(sp, byte(len(headers)))
		for _, h := range headers {
			sp = pieces(append(sp, byte(slices.Index(awHeaderKeys, h.key))), h.val...)
		}
		return append(sp, 1, 1, 1, 1)
	}
	const (
		opInsert, opDelete, opRename, opDefault, opToLiteral, opKey, opAdd, opRemove, opMove = 0, 1, 2, 3, 4, 5, 6, 7, 8
		opCwd                                                                                = 12
	)
	// pick selects the field: 0 command, 1 cwd, 2 url, 3.. args, then env
	// values, then header values (see awFields).
	return []awSeed{
		// attack 1: python3 -c ${RUN_TOKEN:-print(1)}, the default edited;
		// the same in a URL's host.
		{stdio([]string{"python3"}, [][]string{{"-c"}, {"${RUN_TOKEN:-print(1)}"}}, nil, nil), opDefault, 4, "open('x','w').write('y')"},
		{http([]string{"${HOST_NAME:-h.example}", "/mcp"}, nil), opDefault, 2, "evil"},
		// attack 2: Bearer ${GITHUB_TOKEN} swapped for another variable.
		{http([]string{"h.example", "/mcp"}, []awKV{{"Authorization", []string{"Bearer ", "${GITHUB_TOKEN}"}}}), opRename, 3, ""},
		// attack 3: literals and templates under credential-shaped keys;
		// SSH_AUTH_SOCK repointed.
		{stdio([]string{"npx"}, nil, []awKV{{"API_KEY", []string{"literal-one"}}}, nil), opInsert, 3, "two"},
		{stdio([]string{"npx"}, nil, []awKV{{"API_KEY", []string{"${HOME}"}}}, nil), opRename, 3, ""},
		{stdio([]string{"npx"}, nil, []awKV{{"SSH_AUTH_SOCK", []string{"${SSH_AUTH_SOCK}"}}}, nil), opToLiteral, 3, ""},
		// attack 4: a credential-shaped variable as the command.
		{stdio([]string{"${GITHUB_TOKEN}"}, nil, nil, nil), opInsert, 0, "x"},
		// attack 10: defaults secret by position.
		{stdio([]string{"sh"}, [][]string{{"-c"}, {"AUTH=", "${MODE:-none}", " exec srv"}}, nil, nil), opDefault, 4, ";id"},
		{stdio([]string{"npx"}, [][]string{{"--no-auth"}, {"${MODE:-none}"}}, nil, nil), opDefault, 4, "x"},
		{stdio([]string{"npx"}, [][]string{{"--token"}, {"${MODE:-none}"}}, nil, nil), opDefault, 4, "x"},
		{stdio([]string{"npx"}, [][]string{{"--session"}, {"${MODE:-none}"}}, nil, nil), opDefault, 4, "x"},
		{stdio([]string{"npx"}, [][]string{{"--token=", "${MODE:-none}"}}, nil, nil), opDefault, 3, "x"},
		{stdio([]string{"npx"}, [][]string{{"_authToken=", "${MODE:-none}"}}, nil, nil), opDefault, 3, "x"},
		{stdio([]string{"npx"}, nil, []awKV{{"NODE_OPTIONS", []string{"--api-key=", "${X:-}"}}}, nil), opDefault, 3, "evil"},
		{http([]string{"h.example", "/mcp", "?token=", "${MODE:-none}"}, nil), opDefault, 2, "y"},
		{http([]string{"h.example", "/mcp"}, []awKV{{"X-Tenant", []string{"Bearer ", "${MODE:-none}"}}}), opDefault, 3, "y"},
		// attack 12: payloads behind masked text; a PYTHONPATH redirect.
		{stdio([]string{"python3"}, [][]string{{"-c"}, {"-----BEGIN PRIVATE KEY-----\n", "MIIEowIBAAKCAQEA\n", "import os"}}, nil, nil), opInsert, 4, "\nos.system('id')"},
		{stdio([]string{"sh"}, [][]string{{"-c"}, {"AUTH=", "$(id)", " exec srv"}}, nil, nil), opDelete, 4, ""},
		{stdio([]string{"python3"}, [][]string{{"-m"}, {"mod"}}, []awKV{{"PYTHONPATH", []string{"."}}}, nil), opInsert, 5, "/tmp"},
		// a literal that imitates a marker.
		{stdio([]string{"npx"}, [][]string{{"--token=", "<redacted:0a1b2c3d>"}}, nil, nil), opInsert, 3, "x"},
		// keys, positions, cwd and url.
		{stdio([]string{"npx"}, [][]string{{"-y"}, {"@scope/server"}}, []awKV{{"PLAIN", []string{"${HOME}"}}}, nil), opKey, 0, ""},
		{stdio([]string{"npx"}, [][]string{{"-y", "@scope/server"}, {"."}}, nil, nil), opMove, 0, ""},
		{stdio([]string{"npx"}, nil, nil, []string{"${HOME}", "/"}), opCwd, 0, ""},
		{stdio([]string{"npx"}, [][]string{{"-y"}}, nil, nil), opAdd, 1, "--inspect"},
		{stdio([]string{"npx"}, [][]string{{"-y"}}, nil, nil), opRemove, 0, ""},
		{http([]string{"аpple.com", "/mcp"}, nil), opInsert, 2, "x"},
		{http([]string{"u:", "${SERVICE_TOKEN:-s3cr3t}", "@", "h.example"}, nil), opDefault, 2, "@evil.example"},
	}
}

func FuzzFingerprintAsWritten(f *testing.F) {
	seeds := awSeeds()
	for _, s := range seeds {
		f.Add(s.spec, s.op, s.pick, s.text)
	}
	f.Fuzz(func(t *testing.T, spec []byte, op uint8, pick uint16, text string) {
		awCheck(t, spec, op, pick, text)
	})
}

// awCheck is the property for one generated definition and mutation. It
// returns how far it got: "refused" (Materialize refused the definition,
// as Decode would), "unmaterialized", "unchanged" (the mutation did not
// apply, changed nothing, or broke the template), or "checked".
func awCheck(t *testing.T, spec []byte, op uint8, pick uint16, text string) string {
	t.Helper()
	g := &awGen{spec: spec, text: text}
	d := g.definition()
	vars := maps.Clone(awVars)
	m, err := Materialize(d, awLookup(vars))
	if why := targetRefusal(d); why != "" {
		if refusal.ReasonOf(err) != why {
			t.Fatalf("Decode refuses (%s) but Materialize gave %v", why, err)
		}
	}
	if err != nil {
		if targetRefusal(d) != "" {
			return "refused"
		}
		return "unmaterialized"
	}
	fp := Fingerprint(m)
	review := awReview(t, d)

	// Rotation: a variable whose every stretch is secret may change its
	// value without changing the fingerprint; one feeding a non-secret
	// stretch may not.
	secretOnly, plain := map[string]bool{}, map[string]bool{}
	for _, v := range awValues(m) {
		for _, s := range v.Stretches {
			if s.Secret {
				if !plain[s.Var] {
					secretOnly[s.Var] = true
				}
			} else {
				plain[s.Var] = true
				delete(secretOnly, s.Var)
			}
		}
	}
	for name := range secretOnly {
		rot := maps.Clone(vars)
		rot[name] = "rotated-" + text
		if m2, err := Materialize(d, awLookup(rot)); err == nil {
			if Fingerprint(m2) != fp {
				t.Fatalf("rotating %s (secret only) changed the fingerprint of %s", name, awShow(d))
			}
		}
		if secret.IsCredentialName(name) && plain[name] {
			t.Fatalf("credential-shaped %s fed a non-secret stretch", name)
		}
	}
	for name := range plain {
		rot := maps.Clone(vars)
		rot[name] = vars[name] + "-changed"
		if m2, err := Materialize(d, awLookup(rot)); err == nil && Fingerprint(m2) == fp {
			t.Fatalf("changing %s (feeds a non-secret stretch) kept the fingerprint of %s", name, awShow(d))
		}
	}

	// Any change to what is written changes the fingerprint and the
	// review.
	d2, vars2, what := awMutate(d, vars, op, pick, text)
	if d2 == nil || awSame(d, d2) {
		return "unchanged"
	}
	m2, err := Materialize(d2, awLookup(vars2))
	if err != nil {
		return "unchanged"
	}
	if Fingerprint(m2) == fp {
		t.Fatalf("%s kept the fingerprint:\n  %s\n  %s", what, awShow(d), awShow(d2))
	}
	if what != "refusal" && awReview(t, d2) == review {
		t.Fatalf("%s kept the review:\n  %s\n  %s", what, awShow(d), awShow(d2))
	}
	return "checked"
}

// awValues lists every materialized value of m.
func awValues(m *Materialized) []Value {
	vs := []Value{m.Command, m.Cwd, m.URL}
	vs = append(vs, m.Args...)
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		vs = append(vs, m.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
		vs = append(vs, m.Headers[k])
	}
	return vs
}

// awSame reports whether a and b are written alike in every field the
// fingerprint covers.
func awSame(a, b *Definition) bool {
	ja, _ := json.Marshal(awPlain(a))
	jb, _ := json.Marshal(awPlain(b))
	return string(ja) == string(jb)
}

// awPlain is a definition's fields as plain data (Definition's own JSON
// form is its projection).
func awPlain(d *Definition) any {
	return []any{d.Name, d.Kind, d.Command, d.Args, d.Env, d.Cwd, d.URL, d.Headers, d.HeadersHelper, d.OAuth,
		d.RequiresTrustedWorkspace, d.Refusal, d.IncludeTools, d.IncludeTools == nil, d.ExcludeTools, d.Args == nil}
}

// awShow prints a definition for a failure message (generated text only,
// never a real secret).
func awShow(d *Definition) string {
	js, _ := json.Marshal(awPlain(d))
	return string(js)
}

// TestFingerprintAsWrittenSeeds checks the seeds reach what they are for:
// a seed that decodes to something else, or whose mutation does not apply,
// proves nothing. Attack 4 (a credential-shaped variable as the command)
// is refused before any mutation.
func TestFingerprintAsWrittenSeeds(t *testing.T) {
	for i, s := range awSeeds() {
		want := "checked"
		if i == 6 {
			want = "refused"
		}
		if got := awCheck(t, s.spec, s.op, s.pick, s.text); got != want {
			g := &awGen{spec: s.spec, text: s.text}
			t.Errorf("seed %d reached %q, not %q: %s", i, got, want, awShow(g.definition()))
		}
	}
}
