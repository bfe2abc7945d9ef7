package definition

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
)

// matTLookup returns a Lookup over vars.
func matTLookup(vars map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestMaterializeTemplate(t *testing.T) {
	vars := map[string]string{
		"A":            "alpha",
		"B":            "beta",
		"EMPTY":        "",
		"GITHUB_TOKEN": "ghp_secretvalue",
		"HOME":         "/home/u",
	}
	type st = Stretch
	tests := []struct {
		name      string
		in        string
		want      string
		stretches []Stretch
	}{
		{"no template", "plain text", "plain text", nil},
		{"empty", "", "", nil},
		{"dollar without brace", "$HOME/x", "$HOME/x", nil},
		{"trailing dollar", "a$", "a$", nil},
		{"dollar brace later", "$ {A}", "$ {A}", nil},
		{"lone brace", "{A}", "{A}", nil},
		{"set", "${A}", "alpha", []st{{0, 5, "A", false, false}}},
		{"set empty", "${EMPTY}", "", []st{{0, 0, "EMPTY", false, false}}},
		{"surrounded", "pre${A}mid${B}post", "prealphamidbetapost", []st{{3, 8, "A", false, false}, {11, 15, "B", false, false}}},
		{"adjacent", "${A}${B}", "alphabeta", []st{{0, 5, "A", false, false}, {5, 9, "B", false, false}}},
		{"same twice", "${A}/${A}", "alpha/alpha", []st{{0, 5, "A", false, false}, {6, 11, "A", false, false}}},
		{"default unset", "${UNSET:-d}", "d", []st{{0, 1, "UNSET", true, false}}},
		{"default empty var", "${EMPTY:-d}", "d", []st{{0, 1, "EMPTY", true, false}}},
		{"default set var", "${A:-d}", "alpha", []st{{0, 5, "A", false, false}}},
		{"empty default", "x${UNSET:-}y", "xy", []st{{1, 1, "UNSET", true, false}}},
		{"default literal specials", "${UNSET:-a:b-c$d{e}", "a:b-c$d{e", []st{{0, 9, "UNSET", true, false}}},
		{"default stops at first brace", "${UNSET:-x}}", "x}", []st{{0, 1, "UNSET", true, false}}},
		{"double dollar", "$${A}", "$alpha", []st{{1, 6, "A", false, false}}},
		{"underscore name", "${_x1:-d}", "d", []st{{0, 1, "_x1", true, false}}},
		{"secret var", "--token=${GITHUB_TOKEN}", "--token=ghp_secretvalue", []st{{8, 23, "GITHUB_TOKEN", false, true}}},
		{"secret default", "${DB_PASSWORD:-hunter2}", "hunter2", []st{{0, 7, "DB_PASSWORD", true, true}}},
		{"secret empty default", "${API_KEY:-}", "", []st{{0, 0, "API_KEY", true, true}}},
		{"home", "${HOME}/.cache", "/home/u/.cache", []st{{0, 7, "HOME", false, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Materialize(&Definition{Name: "s", Args: []string{tt.in}}, matTLookup(vars))
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.Args[0].Text)
			assert.Equal(t, tt.stretches, m.Args[0].Stretches)
			assert.False(t, m.Args[0].KeySecret)
		})
	}
}

func TestMaterializeInvalidTemplate(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"open only", "${"},
		{"open at end", "abc${"},
		{"empty name", "${}"},
		{"digit first", "${1A}"},
		{"unterminated", "${A"},
		{"shell dash", "${A-x}"},
		{"shell colon", "${A:x}"},
		{"shell plus", "${A:+x}"},
		{"default unterminated", "${A:-x"},
		{"nested default", "${A:-${B}}"},
		{"space before name", "${ A}"},
		{"space after name", "${A }"},
		{"dot in name", "${A.B}"},
		{"dash first", "${-A}"},
		{"good then bad", "${A:-x}${"},
		{"non ascii name", "${Ä}"},
		{"bad before good", "${ ${A}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Definition{Name: "srv", Command: "ok", Args: []string{"fine", "${A:-x}", tt.in + "SECRETVALUE"}}
			m, err := Materialize(d, matTLookup(map[string]string{"A": "a"}))
			require.Error(t, err)
			assert.Nil(t, m)
			var re *refusal.Error
			require.ErrorAs(t, err, &re)
			assert.Equal(t, refusal.Config, refusal.ClassOf(err))
			assert.Equal(t, ReasonInvalidTemplate, refusal.ReasonOf(err))
			assert.Equal(t, "srv", re.Server)
			assert.Equal(t, "invalid template in args[2]", re.Detail)
			assert.NotContains(t, err.Error(), "SECRETVALUE")
			assert.NotContains(t, fmt.Sprintf("%+v", err), "SECRETVALUE")
			var me *MissingError
			assert.False(t, errors.As(err, &me), "an invalid template is not a missing variable")
		})
	}
}

func TestMaterializeFieldNames(t *testing.T) {
	tests := []struct {
		name  string
		def   Definition
		field string
	}{
		{"command", Definition{Command: "${"}, "command"},
		{"arg", Definition{Args: []string{"a", "${"}}, "args[1]"},
		{"env", Definition{Env: map[string]string{"HOME": "${"}}, `env["HOME"]`},
		{"env key quoted", Definition{Env: map[string]string{"A\nB": "${"}}, `env["A\nB"]`},
		{"cwd", Definition{Cwd: "${"}, "cwd"},
		{"url", Definition{URL: "${"}, "url"},
		{"header", Definition{Headers: map[string]string{"X-Trace": "${"}}, `headers["X-Trace"]`},
		{"first in order wins", Definition{Command: "ok", Cwd: "${", URL: "${", Env: map[string]string{"B": "${", "A": "ok"}}, `env["B"]`},
		{"sorted env keys", Definition{Env: map[string]string{"Z": "${", "M": "${"}}, `env["M"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Materialize(&tt.def, nil)
			var re *refusal.Error
			require.ErrorAs(t, err, &re)
			assert.Equal(t, ReasonInvalidTemplate, re.Reason)
			assert.Equal(t, "invalid template in "+tt.field, re.Detail)
		})
	}
}

func TestMaterializeMissing(t *testing.T) {
	d := &Definition{
		Name:    "gh",
		Command: "${CMD}",
		Args:    []string{"--token=${GITHUB_TOKEN}", "${ZED}", "${OK:-fallback}", "${CMD}"},
		Env:     map[string]string{"API_KEY": "${OPENAI_API_KEY}", "HOME": "${HOME}"},
		Cwd:     "${ZED}",
		URL:     "https://${HOST}/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"},
	}
	vars := map[string]string{"HOME": "/h", "CANARYVAR": "CANARY-VALUE-123"}
	m, err := Materialize(d, matTLookup(vars))
	require.Error(t, err)
	assert.Nil(t, m)

	var me *MissingError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, []string{"CMD", "GITHUB_TOKEN", "HOST", "OPENAI_API_KEY", "ZED"}, me.Missing)
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.Equal(t, ReasonUnsetVariable, refusal.ReasonOf(err))
	assert.True(t, errors.Is(err, refusal.New(refusal.Config, ReasonUnsetVariable, "")))
	var re *refusal.Error
	require.ErrorAs(t, err, &re)
	assert.Same(t, me.Refusal, re)
	assert.Equal(t, "gh", re.Server)
	assert.Equal(t,
		`unset variables: CMD in command, GITHUB_TOKEN in args[0], HOST in url, OPENAI_API_KEY in env["API_KEY"], ZED in args[1]`,
		re.Detail)
	assert.Equal(t, re.Error(), err.Error())
	assert.NotContains(t, fmt.Sprintf("%+v %v %s", err, err, err), "/h")
}

func TestMaterializeMissingDetailBounded(t *testing.T) {
	var args []string
	for i := range 20 {
		args = append(args, fmt.Sprintf("${V%02d}", 19-i))
	}
	_, err := Materialize(&Definition{Name: "s", Args: args}, nil)
	var me *MissingError
	require.ErrorAs(t, err, &me)
	require.Len(t, me.Missing, 20)
	assert.Equal(t, "V00", me.Missing[0])
	assert.Equal(t, "V19", me.Missing[19])
	assert.Contains(t, me.Refusal.Detail, "V07 in args[12], and 12 more")
	assert.NotContains(t, me.Refusal.Detail, "V08")
}

func TestMaterializeEmptySetIsNotUnset(t *testing.T) {
	m, err := Materialize(&Definition{Command: "x${E}y"}, matTLookup(map[string]string{"E": ""}))
	require.NoError(t, err)
	assert.Equal(t, "xy", m.Command.Text)
}

func TestMaterializeNilLookupMeansUnset(t *testing.T) {
	m, err := Materialize(&Definition{Command: "${A:-d}", Args: []string{"lit"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, "d", m.Command.Text)
	assert.True(t, m.Command.Stretches[0].Default)

	_, err = Materialize(&Definition{Command: "${A}"}, nil)
	var me *MissingError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, []string{"A"}, me.Missing)
}

func TestMaterializeNilDefinition(t *testing.T) {
	m, err := Materialize(nil, nil)
	assert.Nil(t, m)
	assert.Equal(t, refusal.Internal, refusal.ClassOf(err))
	assert.Equal(t, "nil_definition", refusal.ReasonOf(err))
}

func TestMaterializeKeySecret(t *testing.T) {
	d := &Definition{
		Env: map[string]string{
			"API_KEY": "literal", "GITHUB_TOKEN": "x", "NODE_OPTIONS": "--max-old-space-size=1",
			"HOME": "/h", "KEYBOARD_LAYOUT": "us", "db.password": "p",
		},
		Headers: map[string]string{
			"Authorization": "Bearer x", "cookie": "a=b", "X-Api-Key": "k", "X-Custom-Token": "t",
			"X-Trace": "abc", "Accept": "application/json", "Private-Token": "p",
		},
	}
	m, err := Materialize(d, nil)
	require.NoError(t, err)
	wantEnv := map[string]bool{"API_KEY": true, "GITHUB_TOKEN": true, "NODE_OPTIONS": false, "HOME": false, "KEYBOARD_LAYOUT": false, "db.password": true}
	for k, want := range wantEnv {
		assert.Equal(t, want, m.Env[k].KeySecret, "env %s", k)
		assert.Equal(t, want, m.Env[k].HasSecret(), "env %s", k)
		assert.Equal(t, d.Env[k], m.Env[k].Text)
	}
	wantHdr := map[string]bool{"Authorization": true, "cookie": true, "X-Api-Key": true, "X-Custom-Token": true, "X-Trace": false, "Accept": false, "Private-Token": true}
	for k, want := range wantHdr {
		assert.Equal(t, want, m.Headers[k].KeySecret, "header %s", k)
	}
	assert.False(t, m.Command.KeySecret)
}

func TestMaterializeSecretStretchUnderPlainKey(t *testing.T) {
	d := &Definition{
		Env:     map[string]string{"CONFIG": "token=${GITHUB_TOKEN}"},
		Headers: map[string]string{"X-Trace": "${TRACE_ID}"},
	}
	m, err := Materialize(d, matTLookup(map[string]string{"GITHUB_TOKEN": "t", "TRACE_ID": "1"}))
	require.NoError(t, err)
	assert.False(t, m.Env["CONFIG"].KeySecret)
	assert.True(t, m.Env["CONFIG"].HasSecret())
	assert.False(t, m.Headers["X-Trace"].HasSecret())
}

// TestMaterializeLeavesOtherFieldsAlone: header helper argv, OAuth fields
// and keys are never templates, so an unset variable there is no error and
// the text is kept as written.
func TestMaterializeLeavesOtherFieldsAlone(t *testing.T) {
	d := &Definition{
		Name:          "${NAME}",
		Kind:          KindHTTP,
		URL:           "https://example.com/mcp",
		HeadersHelper: []string{"/bin/helper", "${UNSET_HELPER}"},
		OAuth:         &OAuth{ClientID: "${UNSET_CLIENT}", Scopes: []string{"${S}"}, MetadataURL: "${M}"},
		Env:           map[string]string{"${KEY}": "v"},
		Headers:       map[string]string{"${HKEY}": "v"},
	}
	m, err := Materialize(d, nil)
	require.NoError(t, err)
	assert.Same(t, d, m.Def)
	assert.Equal(t, "v", m.Env["${KEY}"].Text)
	assert.Equal(t, "v", m.Headers["${HKEY}"].Text)
	assert.Equal(t, []string{"/bin/helper", "${UNSET_HELPER}"}, m.Def.HeadersHelper)
	assert.Equal(t, "${UNSET_CLIENT}", m.Def.OAuth.ClientID)
}

func TestMaterializeMirrorsShape(t *testing.T) {
	m, err := Materialize(&Definition{}, nil)
	require.NoError(t, err)
	assert.Nil(t, m.Args)
	assert.Nil(t, m.Env)
	assert.Nil(t, m.Headers)

	m, err = Materialize(&Definition{Args: []string{}, Env: map[string]string{}, Headers: map[string]string{}}, nil)
	require.NoError(t, err)
	assert.NotNil(t, m.Args)
	assert.Empty(t, m.Args)
	assert.NotNil(t, m.Env)
	assert.NotNil(t, m.Headers)
}

func TestMaterializeDeterministic(t *testing.T) {
	d := &Definition{
		Command: "${A}", Args: []string{"${B:-x}", "${C}"},
		Env:     map[string]string{"K1": "${A}", "K2": "${B:-y}", "K3": "z"},
		Headers: map[string]string{"H1": "${C}", "H2": "w"},
	}
	calls := 0
	lookup := func(name string) (string, bool) {
		calls++
		return "v-" + name, name != "B"
	}
	first, err := Materialize(d, lookup)
	require.NoError(t, err)
	for range 20 {
		again, err := Materialize(d, lookup)
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
	assert.Positive(t, calls)
}

func TestValueNeverPrintsText(t *testing.T) {
	const canary = "CANARY7f3a9"
	d := &Definition{
		Command: "run",
		Args:    []string{"--token=${GITHUB_TOKEN}", "ghp_" + canary + "0123456789abcdef"},
		Env:     map[string]string{"API_KEY": canary, "PLAIN": "ok ${DB_PASSWORD}"},
		Headers: map[string]string{"Authorization": "Bearer " + canary},
	}
	m, err := Materialize(d, matTLookup(map[string]string{"GITHUB_TOKEN": canary, "DB_PASSWORD": canary}))
	require.NoError(t, err)
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%T"} {
		out := fmt.Sprintf(format, m)
		assert.NotContains(t, out, canary, format)
		out = fmt.Sprintf(format, *m)
		assert.NotContains(t, out, canary, format)
	}
	assert.Equal(t, "--token="+secret.RedactedVar("GITHUB_TOKEN"), fmt.Sprint(m.Args[0]))
	assert.Equal(t, secret.Redacted, fmt.Sprint(m.Env["API_KEY"]))
	assert.Equal(t, `"ok <redacted:DB_PASSWORD>"`, fmt.Sprintf("%q", m.Env["PLAIN"]))
	for _, v := range []any{m, *m, m.Args, m.Env, m.Headers} {
		js, err := json.Marshal(v)
		require.NoError(t, err)
		assert.NotContains(t, string(js), canary)
	}
	js, err := json.Marshal(m)
	require.NoError(t, err)
	var p Projection
	require.NoError(t, json.Unmarshal(js, &p))
	assert.Equal(t, Project(m), p, "a Materialized encodes as its Projection")
	js, err = json.Marshal(m.Args[0])
	require.NoError(t, err)
	var shown string
	require.NoError(t, json.Unmarshal(js, &shown))
	assert.Equal(t, "--token="+secret.RedactedVar("GITHUB_TOKEN"), shown)
	assert.Equal(t, fmt.Sprintf("%+v", Project(m)), fmt.Sprintf("%v", m))
}

func TestFormatNilAndZero(t *testing.T) {
	assert.Equal(t, "<nil>", fmt.Sprint((*Materialized)(nil)))
	assert.Equal(t, "", fmt.Sprint(Value{}))
	assert.Equal(t, secret.Redacted, fmt.Sprint(Value{Text: "x", KeySecret: true}))
}

// TestMaterializeSecretByPosition: a template written where a credential
// goes yields a secret stretch whatever its variable is called, decided on
// the definition's text, never on the values.
func TestMaterializeSecretByPosition(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []bool // Secret of each stretch of the last argument, in order
	}{
		{"after --api-key", []string{"--api-key", "${A}${B}"}, []bool{true, true}},
		{"after -password", []string{"-password", "${A}"}, []bool{true}},
		{"after --port", []string{"--port", "${A}"}, []bool{false}},
		{"after --api-key=x", []string{"--api-key=x", "${A}"}, []bool{false}},
		{"after a templated flag", []string{"--${A}", "${B}"}, []bool{false}},
		{"flag value", []string{"--mode=${A} --token=${B}"}, []bool{false, true}},
		{"npm auth", []string{"//r.example/:_authToken=${A}"}, []bool{true}},
		{"bearer", []string{"Authorization: Bearer ${A}"}, []bool{true}},
		{"bearer, value text shown", []string{"Bearer x ${A}"}, []bool{false}},
		{"userinfo", []string{"https://${A}:${B}@h/?api_key=${C}&x=${D}"}, []bool{false, true, true, false}},
		{"credential name anywhere", []string{"--mode=${GITHUB_TOKEN}"}, []bool{true}},
		{"docker -e", []string{"-e", "API_KEY=${A}"}, []bool{true}},
		{"docker -e plain", []string{"-e", "API_KEY=${A}", "-e", "DEBUG=${B}"}, []bool{false}},
		{"assignment", []string{"x API_KEY=${A} DEBUG=${B}"}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The values are empty or hold separators: the decision must not
			// depend on them.
			for _, val := range []string{"", "v", "a b", "x&token=y", "@"} {
				lookup := func(string) (string, bool) { return val, true }
				m, err := Materialize(&Definition{Args: tt.args}, lookup)
				require.NoError(t, err)
				last := m.Args[len(m.Args)-1]
				var got []bool
				for _, s := range last.Stretches {
					got = append(got, s.Secret)
				}
				assert.Equal(t, tt.want, got, "value %q", val)
			}
		})
	}

	// Under a credential-shaped key the whole value is secret, and so is
	// every stretch in it (its expansion stays out of the fingerprint; its
	// variable's name and default do not).
	m, err := Materialize(&Definition{Env: map[string]string{"API_KEY": "x${HOME} --token=${A}"}}, matTLookup(map[string]string{"A": "x", "HOME": "/h"}))
	require.NoError(t, err)
	assert.True(t, m.Env["API_KEY"].KeySecret)
	assert.True(t, m.Env["API_KEY"].Stretches[0].Secret)
	assert.True(t, m.Env["API_KEY"].Stretches[1].Secret)
	assert.False(t, m.Env["API_KEY"].ArgSecret)
}
