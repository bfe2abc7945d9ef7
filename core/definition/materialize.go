package definition

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
)

// Lookup is the host's variable lookup: it returns a variable's value and
// whether it is set. Core never reads the process environment; a host that
// wants the environment passes os.LookupEnv. A nil Lookup means every
// variable is unset. A Lookup must be deterministic for the duration of one
// Materialize call.
type Lookup func(name string) (value string, ok bool)

// Stretch records that bytes [Start, End) of a Value's Text were produced
// by the template ${Var} or ${Var:-default}.
type Stretch struct {
	// Start and End are byte offsets into Value.Text, Start <= End. A
	// variable set to "" (or an empty default) yields an empty stretch,
	// which is still recorded so the fingerprint marks the variable
	// whatever its value.
	Start, End int
	// Var is the variable's name.
	Var string
	// Default is true when the stretch is the template's default (the
	// variable was unset or empty).
	Default bool
	// Secret is true when Var is credential-shaped
	// (secret.IsCredentialName), whether its value or the default
	// produced the stretch.
	Secret bool
}

// Value is one materialized string value and the record of where its
// bytes came from.
//
// Printing a Value with fmt (any verb) or encoding it as JSON yields its
// display form (see Display), never its Text, so a Value that reaches a log
// line by accident carries no secret.
type Value struct {
	// Text is the expanded value. It may hold secrets: read it only to use
	// the value (to spawn, to connect), never to print it.
	Text string
	// Stretches are the template expansions in Text, in order and
	// non-overlapping. Bytes outside every stretch are template literal
	// text.
	Stretches []Stretch
	// KeySecret is true when the whole value is secret because of the key
	// that holds it: an env key that is secret.IsCredentialName or a header
	// key that is secret.IsCredentialHeader. It is independent of
	// Stretches.
	KeySecret bool
}

// HasSecret reports whether any part of v is secret: v.KeySecret or a
// secret stretch.
func (v Value) HasSecret() bool {
	if v.KeySecret {
		return true
	}
	for _, s := range v.Stretches {
		if s.Secret {
			return true
		}
	}
	return false
}

// Display returns v for display: secret.Redacted when v.KeySecret;
// otherwise Text with every secret stretch replaced by
// secret.RedactedVar(its variable) and then literal credential shapes
// masked by secret.MaskLiterals.
func (v Value) Display() string {
	if v.KeySecret {
		return secret.Redacted
	}
	return secret.MaskLiterals(matReplaceSecret(v))
}

// Format implements fmt.Formatter: every verb prints Display's text (%q
// quoted), so %v, %+v and %#v never print Text.
func (v Value) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprint(f, strconv.Quote(v.Display()))
		return
	}
	fmt.Fprint(f, v.Display())
}

// MarshalJSON encodes v as the JSON string of Display, never Text.
func (v Value) MarshalJSON() ([]byte, error) { return json.Marshal(v.Display()) }

// hasSecretStretch reports whether a stretch of v is secret.
func (v Value) hasSecretStretch() bool {
	for _, s := range v.Stretches {
		if s.Secret {
			return true
		}
	}
	return false
}

// matReplaceSecret returns v.Text with each secret stretch replaced by
// secret.RedactedVar of its variable, and nothing else changed.
func matReplaceSecret(v Value) string {
	if !v.hasSecretStretch() {
		return v.Text
	}
	var b strings.Builder
	last := 0
	for _, s := range v.Stretches {
		if !s.Secret {
			continue
		}
		b.WriteString(v.Text[last:s.Start])
		b.WriteString(secret.RedactedVar(s.Var))
		last = s.End
	}
	b.WriteString(v.Text[last:])
	return b.String()
}

// Materialized is a Definition whose templates have been expanded.
//
// It is produced only by Materialize; every map and slice mirrors the
// Definition's. Printing it with fmt or encoding it as JSON yields its
// Projection; read Text values only to use them.
type Materialized struct {
	// Def is the source definition (templates as written, provenance).
	Def *Definition
	// Command, Args, Env, Cwd, URL and Headers are the expanded values of
	// the Definition's fields of the same name. Env and Headers have the
	// Definition's keys; a nil map or slice stays nil.
	Command Value
	Args    []Value
	Env     map[string]Value
	Cwd     Value
	URL     Value
	Headers map[string]Value
}

// Format implements fmt.Formatter: every verb prints the Projection of m
// (with %+v's field names), never a Text or the Definition, so a
// Materialized that reaches a log line by accident carries no secret and
// no env or header value.
func (m Materialized) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "%+v", Project(&m))
}

// MarshalJSON encodes m as its Projection.
func (m Materialized) MarshalJSON() ([]byte, error) { return json.Marshal(Project(&m)) }

// The refusal reasons Materialize returns, both of Class refusal.Config.
const (
	// ReasonInvalidTemplate: a "${" does not start a well-formed template.
	ReasonInvalidTemplate = "invalid_template"
	// ReasonUnsetVariable: a template without a default names an unset
	// variable.
	ReasonUnsetVariable = "unset_variable"
)

// MissingError is the error Materialize returns when templates without a
// default name unset variables. It wraps a *refusal.Error (Class Config,
// Reason "unset_variable"), so refusal.ClassOf, refusal.ReasonOf and
// errors.As work on it, and it lists every missing variable so a host can
// report them all at once.
type MissingError struct {
	// Refusal is the wrapped typed error. Its Detail names the variables
	// and the first field each was found in, never a value.
	Refusal *refusal.Error
	// Missing lists every unset variable, sorted and without duplicates.
	// Variable names are not secrets.
	Missing []string
}

// Error returns the wrapped refusal's text.
func (e *MissingError) Error() string { return e.Refusal.Error() }

// Unwrap returns the wrapped *refusal.Error.
func (e *MissingError) Unwrap() error { return e.Refusal }

// matMaxDetailVars bounds how many variables a MissingError's Detail names;
// Missing always lists them all.
const matMaxDetailVars = 8

// Materialize expands the ${NAME} and ${NAME:-default} templates of d's
// Command, each Args element, each Env value, Cwd, URL and each Headers
// value, looking variables up with lookup.
//
// Grammar: NAME is [A-Za-z_][A-Za-z0-9_]*. ${NAME} expands to the
// variable's value ("" when it is set to ""); an unset variable is an
// error. ${NAME:-default} expands to the value when it is set and not
// empty, and to default otherwise (shell semantics). The default is taken
// literally up to the first "}": it is never expanded, and a default
// holding "${" is rejected rather than guessed at. A "$" not followed by
// "{" is literal. There is no escape for "${".
//
// Not expanded: keys of Env and Headers, HeadersHelper (an exact argv,
// never a template), OAuth fields, Name and the other fields.
//
// Errors (each carrying Server d.Name and Class refusal.Config):
//   - a "${" that does not start a well-formed template: a *refusal.Error
//     with Reason "invalid_template" whose Detail names the first such
//     field ("args[2]", `env["HOME"]`), never its value;
//   - otherwise, unset variables without a default: a *MissingError
//     (Reason "unset_variable") listing every one of them.
//
// Fields are examined in the order command, args, env (keys sorted), cwd,
// url, headers (keys sorted). Materialize is pure and deterministic. A nil
// d is a refusal.Internal error with Reason "nil_definition".
func Materialize(d *Definition, lookup Lookup) (*Materialized, error) {
	if d == nil {
		return nil, refusal.New(refusal.Internal, "nil_definition", "")
	}
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	x := matExpander{lookup: lookup}
	m := &Materialized{Def: d}
	m.Command = x.expand(d.Command, matField{name: "command"}, false)
	if d.Args != nil {
		m.Args = make([]Value, len(d.Args))
		for i, a := range d.Args {
			m.Args[i] = x.expand(a, matField{name: "args", index: i}, false)
		}
	}
	var keyBuf [matKeyBuf]string
	if d.Env != nil {
		m.Env = make(map[string]Value, len(d.Env))
		for _, k := range matSortedKeysInto(keyBuf[:0], d.Env) {
			m.Env[k] = x.expand(d.Env[k], matField{name: "env", key: k, keyed: true}, secret.IsCredentialName(k))
		}
	}
	m.Cwd = x.expand(d.Cwd, matField{name: "cwd"}, false)
	m.URL = x.expand(d.URL, matField{name: "url"}, false)
	if d.Headers != nil {
		m.Headers = make(map[string]Value, len(d.Headers))
		for _, k := range matSortedKeysInto(keyBuf[:0], d.Headers) {
			m.Headers[k] = x.expand(d.Headers[k], matField{name: "headers", key: k, keyed: true}, secret.IsCredentialHeader(k))
		}
	}
	if x.invalidField != "" {
		return nil, &refusal.Error{
			Class:  refusal.Config,
			Reason: ReasonInvalidTemplate,
			Server: d.Name,
			Detail: "invalid template in " + x.invalidField,
		}
	}
	if len(x.missing) > 0 {
		slices.Sort(x.missing)
		var detail strings.Builder
		detail.WriteString("unset variables: ")
		for i, name := range x.missing {
			if i == matMaxDetailVars {
				fmt.Fprintf(&detail, ", and %d more", len(x.missing)-i)
				break
			}
			if i > 0 {
				detail.WriteString(", ")
			}
			detail.WriteString(name)
			detail.WriteString(" in ")
			detail.WriteString(x.firstField[name])
		}
		return nil, &MissingError{
			Refusal: &refusal.Error{
				Class:  refusal.Config,
				Reason: ReasonUnsetVariable,
				Server: d.Name,
				Detail: detail.String(),
			},
			Missing: x.missing,
		}
	}
	return m, nil
}

// matField names the field a value came from. Its printed form (String)
// is built only when an error needs it.
type matField struct {
	name  string
	index int    // for "args"
	key   string // for "env" and "headers"
	keyed bool
}

// String returns the field as Materialize's errors print it: "command",
// "args[2]", `env["HOME"]`.
func (f matField) String() string {
	switch {
	case f.keyed:
		return f.name + "[" + strconv.QuoteToASCII(f.key) + "]"
	case f.name == "args":
		return "args[" + strconv.Itoa(f.index) + "]"
	default:
		return f.name
	}
}

// matExpander expands templates and collects problems across fields.
type matExpander struct {
	lookup Lookup
	// invalidField is the first field holding a malformed template.
	invalidField string
	// missing are the unset variables, unique, in order of discovery.
	missing []string
	// firstField maps each missing variable to the first field naming it;
	// nil until a variable is missing.
	firstField map[string]string
}

// expand expands the templates of s, which is the value of field. It walks
// s once, template by template, exactly as matParse splits it: expansion
// stops at a malformed template, whose field is recorded.
func (x *matExpander) expand(s string, field matField, keySecret bool) Value {
	v := Value{KeySecret: keySecret}
	if !strings.Contains(s, "${") {
		v.Text = s
		return v
	}
	var b strings.Builder
	b.Grow(len(s) + 32)
	i := 0
	for {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		at := i + j
		b.WriteString(s[i:at])
		p, n := matParseTemplate(s[at:])
		if n == 0 {
			if x.invalidField == "" {
				x.invalidField = field.String()
			}
			break
		}
		i = at + n
		val, ok := x.lookup(p.name)
		useDefault := false
		switch {
		case p.hasDefault && (!ok || val == ""):
			val, useDefault = p.text, true
		case !ok:
			if _, seen := x.firstField[p.name]; !seen {
				if x.firstField == nil {
					x.firstField = map[string]string{}
				}
				x.firstField[p.name] = field.String()
				x.missing = append(x.missing, p.name)
			}
			continue
		}
		start := b.Len()
		b.WriteString(val)
		v.Stretches = append(v.Stretches, Stretch{
			Start:   start,
			End:     b.Len(),
			Var:     p.name,
			Default: useDefault,
			Secret:  secret.IsCredentialName(p.name),
		})
	}
	v.Text = b.String()
	return v
}

// matPart is one piece of a parsed template string: literal text, or a
// template whose text is its default.
type matPart struct {
	template   bool
	name       string
	hasDefault bool
	// text is the literal text, or the default of a template.
	text string
	// raw is the part exactly as written.
	raw string
}

// matParse splits s into literal and template parts. When s holds a
// malformed template, bad is the byte offset of its "${" and the parts
// stop before it; otherwise bad is -1.
func matParse(s string) (parts []matPart, bad int) {
	lit := 0
	i := 0
	for {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		at := i + j
		p, n := matParseTemplate(s[at:])
		if n == 0 {
			if lit < at {
				parts = append(parts, matPart{text: s[lit:at], raw: s[lit:at]})
			}
			return parts, at
		}
		if lit < at {
			parts = append(parts, matPart{text: s[lit:at], raw: s[lit:at]})
		}
		parts = append(parts, p)
		i = at + n
		lit = i
	}
	if lit < len(s) {
		parts = append(parts, matPart{text: s[lit:], raw: s[lit:]})
	}
	return parts, -1
}

// matParseTemplate parses one template at the start of s (which begins
// with "${") and returns it and its length, or length 0 when malformed.
func matParseTemplate(s string) (matPart, int) {
	i := 2
	if i >= len(s) || !matNameStart(s[i]) {
		return matPart{}, 0
	}
	for i < len(s) && matNameByte(s[i]) {
		i++
	}
	name := s[2:i]
	if i < len(s) && s[i] == '}' {
		return matPart{template: true, name: name, raw: s[:i+1]}, i + 1
	}
	if !strings.HasPrefix(s[i:], ":-") {
		return matPart{}, 0
	}
	i += 2
	end := strings.IndexByte(s[i:], '}')
	if end < 0 {
		return matPart{}, 0
	}
	def := s[i : i+end]
	if strings.Contains(def, "${") {
		return matPart{}, 0
	}
	n := i + end + 1
	return matPart{template: true, name: name, hasDefault: true, text: def, raw: s[:n]}, n
}

func matNameStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func matNameByte(c byte) bool { return matNameStart(c) || ('0' <= c && c <= '9') }

// matSortedKeys returns m's keys in byte order.
func matSortedKeys[V any](m map[string]V) []string {
	return matSortedKeysInto(make([]string, 0, len(m)), m)
}

// matKeyBuf is the size of the stack buffer Materialize sorts keys in; a
// map with more keys sorts in a heap slice.
const matKeyBuf = 16

// matSortedKeysInto appends m's keys to buf (normally empty) and returns
// them in byte order.
func matSortedKeysInto[V any](buf []string, m map[string]V) []string {
	for k := range m {
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf
}
