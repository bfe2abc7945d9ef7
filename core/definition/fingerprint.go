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
// (ClientID, Scopes, CallbackPort, MetadataURL, ClientMetadataURL),
// RequiresTrustedWorkspace,
// Refusal, and IncludeTools and ExcludeTools (they decide which tools run).
// The tool filter lines are written only when a filter is present, so a
// definition without one keeps the fingerprint it had before filters
// existed, while an empty includeTools (no tool at all) still differs from
// none. Likewise clientMetadataUrl is written only when set.
//
// Secrets are never hashed; each is replaced by a marker naming its source:
//   - a secret stretch by "var:NAME": one a credential-shaped variable
//     produced (its default included), or one a template produced where a
//     credential goes whatever its variable is called (an argument after
//     a credential-shaped flag, --api-key=${X}, ?token=${X}, Bearer ${X},
//     a userinfo password, _authToken=${X}; see Stretch.Secret);
//   - a whole value under a credential-shaped key (Value.KeySecret) by
//     "env:KEY" or "header:key" (the header key lower-cased).
//
// So rotating a credential keeps the fingerprint, while any other change
// (a NODE_OPTIONS value, the URL's host, text moved between arguments)
// changes it. Markers and literal text are tagged differently in the
// encoding, so no literal can collide with a marker. Literal text is hashed
// as it is, in every argument, the URL and every value not under a
// credential-shaped key: the literal-shape guess of secret.MaskLiterals
// never touches the fingerprint, so two different literal tokens
// fingerprint differently, and so does a literal written after a
// credential-shaped flag ("--api-key", "sk_live_…"), which a definition's
// author controls and which, unlike an env value under API_KEY, may be an
// ordinary argument after a flag that takes none.
//
// Tier and Origin are provenance, not content, and are left out:
// activation binds them separately. Timeout is left out too: it bounds how
// long a request may take, and changes neither what runs nor where it
// connects, so changing it needs no new approval. Map order never matters (keys are
// sorted). The encoding opens with FingerprintVersion.
//
// m must come from Materialize. Fingerprint(nil) is "".
func Fingerprint(m *Materialized) string {
	if m == nil || m.Def == nil {
		return ""
	}
	var buf [1024]byte
	sum := sha256.Sum256(fpAppend(buf[:0], m))
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
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
//	oauth null | {clientId "x" scopes ["a"] callbackPort 0 metadataUrl "" [clientMetadataUrl "y"]}
//	requiresTrustedWorkspace false
//	refusal ""
//	includeTools ["a" "b"]      (only when IncludeTools is non-nil)
//	excludeTools ["c"]          (only when ExcludeTools is non-nil)
//
// A value is a list of segments: L"…" for literal text (adjacent literal
// text merged, empty text omitted, so how a literal was produced does not
// matter) and S"…" for a secret marker (one per secret stretch, even an
// empty one).
func fpEncode(m *Materialized) []byte { return fpAppend(nil, m) }

// fpAppend appends fpEncode's encoding of m to b. Fingerprint hands it a
// stack buffer, so a typical definition is encoded without allocating.
func fpAppend(b []byte, m *Materialized) []byte {
	d := m.Def
	b = append(b, FingerprintVersion...)
	b = append(b, "\nname "...)
	b = strconv.AppendQuote(b, d.Name)
	b = append(b, "\nkind "...)
	b = strconv.AppendQuote(b, string(d.Kind))
	b = append(b, "\ncommand "...)
	b = fpValue(b, m.Command)
	b = append(b, "\nargs ["...)
	for i, a := range m.Args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = fpValue(b, a)
	}
	b = append(b, "]\nenv "...)
	b = fpMap(b, m.Env, "env:", false)
	b = append(b, "\ncwd "...)
	b = fpValue(b, m.Cwd)
	b = append(b, "\nurl "...)
	b = fpValue(b, m.URL)
	b = append(b, "\nheaders "...)
	b = fpMap(b, m.Headers, "header:", true)
	b = append(b, "\nheadersHelper "...)
	b = fpStrings(b, d.HeadersHelper)
	b = append(b, "\noauth "...)
	if o := d.OAuth; o == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, "{clientId "...)
		b = strconv.AppendQuote(b, o.ClientID)
		b = append(b, " scopes "...)
		if o.Scopes == nil {
			b = append(b, "[]"...)
		} else {
			b = fpStrings(b, o.Scopes)
		}
		b = append(b, " callbackPort "...)
		b = strconv.AppendInt(b, int64(o.CallbackPort), 10)
		b = append(b, " metadataUrl "...)
		b = strconv.AppendQuote(b, o.MetadataURL)
		if o.ClientMetadataURL != "" { // absent: the fingerprints of before
			b = append(b, " clientMetadataUrl "...)
			b = strconv.AppendQuote(b, o.ClientMetadataURL)
		}
		b = append(b, '}')
	}
	b = append(b, "\nrequiresTrustedWorkspace "...)
	b = strconv.AppendBool(b, d.RequiresTrustedWorkspace)
	b = append(b, "\nrefusal "...)
	b = strconv.AppendQuote(b, d.Refusal)
	b = append(b, '\n')
	if d.IncludeTools != nil {
		b = append(b, "includeTools "...)
		b = fpStrings(b, d.IncludeTools)
		b = append(b, '\n')
	}
	if d.ExcludeTools != nil {
		b = append(b, "excludeTools "...)
		b = fpStrings(b, d.ExcludeTools)
		b = append(b, '\n')
	}
	return b
}

// fpMap writes a map of values as {key value key value …}, keys sorted.
// keyMarker is the marker a KeySecret value becomes, followed by its key
// (lower-cased when lowerKey).
func fpMap(b []byte, m map[string]Value, keyMarker string, lowerKey bool) []byte {
	b = append(b, '{')
	var keyBuf [matKeyBuf]string
	for i, k := range matSortedKeysInto(keyBuf[:0], m) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ' ')
		v := m[k]
		if v.KeySecret {
			mk := k
			if lowerKey {
				mk = strings.ToLower(k)
			}
			b = append(b, "[S"...)
			b = strconv.AppendQuote(b, keyMarker+mk)
			b = append(b, ']')
			continue
		}
		b = fpValue(b, v)
	}
	return append(b, '}')
}

// fpValue writes v's segments: the literal text between secret stretches
// (non-secret stretches are literal text too, so adjacent literal text is
// one segment) and one marker per secret stretch.
func fpValue(b []byte, v Value) []byte {
	b = append(b, '[')
	first := true
	last := 0
	for _, s := range v.Stretches {
		if !s.Secret {
			continue
		}
		if lit := v.Text[last:s.Start]; lit != "" {
			b = fpSegment(b, &first, 'L', lit)
		}
		b = fpSegment(b, &first, 'S', "var:"+s.Var)
		last = s.End
	}
	if lit := v.Text[last:]; lit != "" {
		b = fpSegment(b, &first, 'L', lit)
	}
	return append(b, ']')
}

// fpSegment writes one segment, tag then quoted text, space-separated from
// the one before.
func fpSegment(b []byte, first *bool, tag byte, s string) []byte {
	if !*first {
		b = append(b, ' ')
	}
	*first = false
	b = append(b, tag)
	return strconv.AppendQuote(b, s)
}

// fpStrings writes a string list, nil as null.
func fpStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendQuote(b, s)
	}
	return append(b, ']')
}
