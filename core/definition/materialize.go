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
	// Secret is true when what the template produced is a credential,
	// whether its value or the default produced the stretch: when Var is
	// credential-shaped (secret.IsCredentialName), or when the template
	// stands where a credential goes, whatever its variable is called —
	// in an argument after a credential-shaped flag (Value.ArgSecret), or
	// where secret.PositionSpans masks a value (--api-key=${X},
	// ?token=${X}, Bearer ${X}, https://u:${X}@h,
	// //registry/:_authToken=${X}), or in a value under a
	// credential-shaped key (Value.KeySecret). The position is decided on
	// the definition's text with every template standing for an opaque
	// value, never on what a variable holds. The fingerprint leaves out
	// the expanded text of a secret stretch and only that: its variable's
	// name and its default, as written, are hashed.
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
	// key that is secret.IsCredentialHeader. Every stretch of such a value
	// is secret; its literal text is still hashed by the fingerprint.
	KeySecret bool
	// ArgSecret is true for an argument that follows a credential-shaped
	// flag (secret.IsCredentialFlag: "--api-key", "--token", "--password",
	// …), as in ["--api-key", VALUE]: the whole argument is that flag's
	// value. Every stretch in it is secret, and Display shows its literal
	// text as secret.Redacted; the fingerprint still hashes that literal
	// text, as it does all literal text in args (see Fingerprint).
	ArgSecret bool
}

// HasSecret reports whether any part of v is secret: v.KeySecret,
// v.ArgSecret or a secret stretch.
func (v Value) HasSecret() bool {
	if v.KeySecret || v.ArgSecret {
		return true
	}
	for _, s := range v.Stretches {
		if s.Secret {
			return true
		}
	}
	return false
}

// Display returns v for display: secret.Redacted when v.KeySecret; when
// v.ArgSecret, each stretch as secret.RedactedVar(its variable) and each
// run of literal text between them as secret.Redacted; otherwise Text with
// every secret stretch replaced by secret.RedactedVar(its variable) and
// then literal credential shapes masked by secret.MaskLiterals.
func (v Value) Display() string {
	switch {
	case v.KeySecret:
		return secret.Redacted
	case v.ArgSecret:
		return matReplaceAll(v)
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

// matReplaceAll returns v.Text with each stretch replaced by
// secret.RedactedVar of its variable and each non-empty run of literal
// text by secret.Redacted: the display of a value that is secret as a
// whole but whose variables are worth naming.
func matReplaceAll(v Value) string {
	var b strings.Builder
	last := 0
	for _, s := range v.Stretches {
		if last < s.Start {
			b.WriteString(secret.Redacted)
		}
		b.WriteString(secret.RedactedVar(s.Var))
		last = s.End
	}
	if last < len(v.Text) {
		b.WriteString(secret.Redacted)
	}
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
//   - otherwise, a secret template as written in the command or the cwd,
//     or in the scheme, host or port of the URL as written (what Decode
//     refuses: it depends on the text alone, so it is decided before the
//     environment is): a *refusal.Error with Reason
//     RefusalSecretInCommand, RefusalSecretInCwd or RefusalSecretInURL
//     (see target.go);
//   - otherwise, unset variables without a default: a *MissingError
//     (Reason "unset_variable") listing every one of them;
//   - otherwise, a secret stretch in the scheme, host or port of the
//     expanded URL (a secret value holding "@" or "/" moved the host):
//     a *refusal.Error with Reason RefusalSecretInURL.
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
	m.Command = x.expand(d.Command, matField{name: "command"}, false, false)
	if d.Args != nil {
		m.Args = make([]Value, len(d.Args))
		for i, a := range d.Args {
			afterFlag := i > 0 && secret.IsCredentialFlag(d.Args[i-1])
			m.Args[i] = x.expand(a, matField{name: "args", index: i}, false, afterFlag)
		}
	}
	var keyBuf [matKeyBuf]string
	if d.Env != nil {
		m.Env = make(map[string]Value, len(d.Env))
		for _, k := range matSortedKeysInto(keyBuf[:0], d.Env) {
			m.Env[k] = x.expand(d.Env[k], matField{name: "env", key: k, keyed: true}, secret.IsCredentialName(k), false)
		}
	}
	m.Cwd = x.expand(d.Cwd, matField{name: "cwd"}, false, false)
	m.URL = x.expand(d.URL, matField{name: "url"}, false, false)
	if d.Headers != nil {
		m.Headers = make(map[string]Value, len(d.Headers))
		for _, k := range matSortedKeysInto(keyBuf[:0], d.Headers) {
			m.Headers[k] = x.expand(d.Headers[k], matField{name: "headers", key: k, keyed: true}, secret.IsCredentialHeader(k), false)
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
	if why := targetRefusal(d); why != "" {
		return nil, &refusal.Error{Class: refusal.Config, Reason: why, Server: d.Name, Detail: targetDetail[why]}
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
	if err := targetError(m); err != nil {
		return nil, err
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
// stops at a malformed template, whose field is recorded. keySecret and
// argSecret are the value's KeySecret and ArgSecret.
func (x *matExpander) expand(s string, field matField, keySecret, argSecret bool) Value {
	v := Value{KeySecret: keySecret, ArgSecret: argSecret}
	if !strings.Contains(s, "${") {
		v.Text = s
		return v
	}
	// Which templates stand where a credential goes. In a value secret by
	// its key every stretch is secret.
	allPos := keySecret
	var pos matPosCursor
	if !keySecret {
		allPos, pos = matPositions(s, argSecret)
	}
	k := -1 // the index of the current template
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
		k++
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
			Secret:  secret.IsCredentialName(p.name) || allPos || pos.has(k),
		})
	}
	v.Text = b.String()
	return v
}

// matPlaceholder stands for one template in the text matPositions hands
// to secret.PositionSpans: NUL bytes, which are no letter, digit, space,
// quote or separator, so they belong to every value those rules mask and
// to no name they test; and 8 of them, the least the Bearer/Basic rule
// masks, so that "Bearer ${X}" counts whatever X holds.
const matPlaceholder = "\x00\x00\x00\x00\x00\x00\x00\x00"

// matPositions reports which templates of s (counted from 0, in order,
// up to the first malformed one) stand where a credential goes: all of
// them when afterFlag (the value is an argument after a credential-shaped
// flag), otherwise those whose placeholder falls in a span
// secret.PositionSpans returns for s with every template replaced by
// matPlaceholder. The answer depends on the text of s only, never on
// what a variable holds, so a variable's value can change neither which
// stretches are secret nor, through that, the fingerprint's structure.
func matPositions(s string, afterFlag bool) (all bool, which []int) {
	if afterFlag {
		return true, nil
	}
	if !strings.Contains(s, "${") {
		return false, nil
	}
	// Every position rule needs one of these bytes ("=" after a flag,
	// parameter or npm key; "@" after a userinfo password; a space or tab
	// after Bearer/Basic).
	if !strings.ContainsAny(s, "=@ \t") {
		return false, nil
	}
	var buf [256]byte
	sk := buf[:0]
	var offBuf [8]int
	offs := offBuf[:0]
	i := 0
	for {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			sk = append(sk, s[i:]...)
			break
		}
		at := i + j
		sk = append(sk, s[i:at]...)
		_, n := matParseTemplate(s[at:])
		if n == 0 {
			sk = append(sk, s[at:]...)
			break
		}
		offs = append(offs, len(sk))
		sk = append(sk, matPlaceholder...)
		i = at + n
	}
	spans := secret.PositionSpans(string(sk))
	if len(spans) == 0 {
		return false, nil
	}
	// One sweep: offs ascend, so with spans sorted by start, a placeholder
	// [off, off+8) overlaps a span exactly when the largest end among the
	// spans starting before off+8 is beyond off.
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	j, maxEnd := 0, 0
	for k, off := range offs {
		for ; j < len(spans) && spans[j][0] < off+len(matPlaceholder); j++ {
			maxEnd = max(maxEnd, spans[j][1])
		}
		if maxEnd > off {
			which = append(which, k)
		}
	}
	return false, which
}

// matPosCursor answers "is template k in which?" for k counting up from
// 0, in constant time per call, over matPositions' ascending list.
type matPosCursor []int

// has reports whether k is in the list; later calls must pass larger k.
func (c *matPosCursor) has(k int) bool {
	for len(*c) > 0 && (*c)[0] < k {
		*c = (*c)[1:]
	}
	return len(*c) > 0 && (*c)[0] == k
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
