package definition

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// FingerprintVersion is the tag that opens the fingerprint encoding. It
// changes whenever the encoding does, so fingerprints of different
// encodings never compare equal by accident.
const FingerprintVersion = "mcpward-fp-v1"

// Fingerprint returns the definition fingerprint of m: the lowercase hex
// SHA-256 of a canonical, injective encoding of every field that decides
// what runs or where it connects — Name, Kind, Command, Args, Env (keys and
// values), Cwd, URL, Headers (keys and values), HeadersHelper, OAuth
// (ClientID, Scopes, CallbackPort, MetadataURL), RequiresTrustedWorkspace
// and Refusal.
//
// Secrets are never hashed; each is replaced by a marker naming its source:
//   - a secret stretch (one a credential-shaped variable produced, its
//     default included) by "var:NAME";
//   - a whole value under a credential-shaped key (Value.KeySecret) by
//     "env:KEY" or "header:key" (the header key lower-cased).
//
// So rotating a credential keeps the fingerprint, while any other change
// (a NODE_OPTIONS value, the URL's host, text moved between arguments)
// changes it. Markers and literal text are tagged differently in the
// encoding, so no literal can collide with a marker. Literal text is hashed
// as it is: the literal-shape guess of secret.MaskLiterals never touches
// the fingerprint, so two different literal tokens fingerprint differently.
//
// Tier and Origin are provenance, not content, and are left out:
// activation binds them separately. Map order never matters (keys are
// sorted). The encoding opens with FingerprintVersion.
//
// m must come from Materialize. Fingerprint(nil) is "".
func Fingerprint(m *Materialized) string {
	if m == nil || m.Def == nil {
		return ""
	}
	sum := sha256.Sum256(fpEncode(m))
	return hex.EncodeToString(sum[:])
}

// fpEncode returns the canonical encoding Fingerprint hashes. It is
// unexported on purpose: it holds non-secret values that are still not for
// display (an env value of no recognisable shape may be a credential).
//
// Layout, one field per line in a fixed order, every string written with
// strconv.Quote (injective, so no string can break the structure):
//
//	mcpward-fp-v1
//	name "id"
//	kind "stdio"
//	command [L"npx"]
//	args [[L"-y"] [L"--token=" S"var:TOKEN"]]
//	env {"API_KEY" [S"env:API_KEY"] "NODE_OPTIONS" [L"--max-old-space-size=1"]}
//	cwd []
//	url []
//	headers {}
//	headersHelper null | ["argv0" "argv1"]
//	oauth null | {clientId "x" scopes ["a"] callbackPort 0 metadataUrl ""}
//	requiresTrustedWorkspace false
//	refusal ""
//
// A value is a list of segments: L"…" for literal text (adjacent literal
// text merged, empty text omitted, so how a literal was produced does not
// matter) and S"…" for a secret marker (one per secret stretch, even an
// empty one).
func fpEncode(m *Materialized) []byte {
	d := m.Def
	var b strings.Builder
	b.WriteString(FingerprintVersion)
	b.WriteString("\nname ")
	b.WriteString(strconv.Quote(d.Name))
	b.WriteString("\nkind ")
	b.WriteString(strconv.Quote(string(d.Kind)))
	b.WriteString("\ncommand ")
	fpValue(&b, m.Command)
	b.WriteString("\nargs [")
	for i, a := range m.Args {
		if i > 0 {
			b.WriteByte(' ')
		}
		fpValue(&b, a)
	}
	b.WriteString("]\nenv ")
	fpMap(&b, m.Env, "env:", false)
	b.WriteString("\ncwd ")
	fpValue(&b, m.Cwd)
	b.WriteString("\nurl ")
	fpValue(&b, m.URL)
	b.WriteString("\nheaders ")
	fpMap(&b, m.Headers, "header:", true)
	b.WriteString("\nheadersHelper ")
	fpStrings(&b, d.HeadersHelper)
	b.WriteString("\noauth ")
	if o := d.OAuth; o == nil {
		b.WriteString("null")
	} else {
		b.WriteString("{clientId ")
		b.WriteString(strconv.Quote(o.ClientID))
		b.WriteString(" scopes ")
		if o.Scopes == nil {
			b.WriteString("[]")
		} else {
			fpStrings(&b, o.Scopes)
		}
		b.WriteString(" callbackPort ")
		b.WriteString(strconv.Itoa(o.CallbackPort))
		b.WriteString(" metadataUrl ")
		b.WriteString(strconv.Quote(o.MetadataURL))
		b.WriteByte('}')
	}
	b.WriteString("\nrequiresTrustedWorkspace ")
	b.WriteString(strconv.FormatBool(d.RequiresTrustedWorkspace))
	b.WriteString("\nrefusal ")
	b.WriteString(strconv.Quote(d.Refusal))
	b.WriteByte('\n')
	return []byte(b.String())
}

// fpMap writes a map of values as {key value key value …}, keys sorted.
// keyMarker is the marker a KeySecret value becomes, followed by its key
// (lower-cased when lowerKey).
func fpMap(b *strings.Builder, m map[string]Value, keyMarker string, lowerKey bool) {
	b.WriteByte('{')
	for i, k := range matSortedKeys(m) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(' ')
		v := m[k]
		if v.KeySecret {
			mk := k
			if lowerKey {
				mk = strings.ToLower(k)
			}
			b.WriteString("[S")
			b.WriteString(strconv.Quote(keyMarker + mk))
			b.WriteByte(']')
			continue
		}
		fpValue(b, v)
	}
	b.WriteByte('}')
}

// fpValue writes v's segments.
func fpValue(b *strings.Builder, v Value) {
	b.WriteByte('[')
	first := true
	seg := func(tag byte, s string) {
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteByte(tag)
		b.WriteString(strconv.Quote(s))
	}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			seg('L', lit.String())
			lit.Reset()
		}
	}
	last := 0
	for _, s := range v.Stretches {
		if !s.Secret {
			continue
		}
		lit.WriteString(v.Text[last:s.Start])
		flush()
		seg('S', "var:"+s.Var)
		last = s.End
	}
	lit.WriteString(v.Text[last:])
	flush()
	b.WriteByte(']')
}

// fpStrings writes a string list, nil as null.
func fpStrings(b *strings.Builder, ss []string) {
	if ss == nil {
		b.WriteString("null")
		return
	}
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(s))
	}
	b.WriteByte(']')
}
