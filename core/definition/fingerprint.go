package definition

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// FingerprintVersion is the tag that opens the fingerprint encoding. It
// changes whenever the encoding does, so fingerprints of different
// encodings never compare equal by accident. v2 (issue 22) hashes the
// definition as written; every approval made under v1 asks again.
const FingerprintVersion = "mcpward-fp-v2"

// Fingerprint returns the definition fingerprint of m: the lowercase hex
// SHA-256 of a canonical, injective encoding of every field that decides
// what runs or where it connects — Name, Kind, Command, Args, Env (keys and
// values), Cwd, URL, Headers (keys and values), HeadersHelper, OAuth
// (ClientID, Scopes, CallbackPort, MetadataURL, ClientMetadataURL),
// RequiresTrustedWorkspace, Refusal, and IncludeTools and ExcludeTools
// (they decide which tools run).
//
// It covers the definition AS WRITTEN, and the environment only where that
// is not a secret:
//   - every literal stretch of every value is hashed, in any position and
//     under any key (a credential-shaped env or header key, after
//     --api-key, after "Bearer " included): two different literals never
//     fingerprint alike, whatever makes them secret for display;
//   - every template is hashed as a marker naming its variable, followed
//     by its default as written when it has one (":-" and nothing after
//     it is a default too): which variable feeds a value, and what it
//     falls back to, are identity;
//   - the expanded value of a template is hashed after its marker, unless
//     the stretch is secret (Stretch.Secret: a credential-shaped variable,
//     a template where a credential goes, any template under a
//     credential-shaped key or after a credential-shaped flag). So a
//     changed NODE_OPTIONS or HOME value changes the fingerprint, while
//     rotating the value of the same credential variable does not.
//
// Nothing that is secret only because of the environment enters it, and
// everything the file says does: an edit to the file (a literal, a
// variable's name, a default, a key, a position, the command, the cwd, the
// URL, a header's name) changes it; a change of the environment changes it
// only through a non-secret variable. The literal-shape guess of
// secret.MaskLiterals never touches it. A fingerprint is a SHA-256 over
// literals written in the file: someone who sees it and knows the rest of
// the file can test guesses of a short literal secret (write credentials
// as ${VAR} to keep them out).
//
// Tier and Origin are provenance, not content, and are left out:
// activation binds them separately. Timeout is left out too: it bounds how
// long a request may take, and changes neither what runs nor where it
// connects, so changing it needs no new approval. Map order never matters
// (keys are sorted). The tool filter lines are written only when a filter
// is present (an empty includeTools, no tool at all, still differs from
// none), and clientMetadataUrl only when set.
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
// unexported on purpose: it holds literals and non-secret values that are
// still not for display.
//
// Layout, one field per line in a fixed order, every string written with
// strconv.Quote (injective, so no string can break the structure):
//
//	mcpward-fp-v2
//	name "id"
//	kind "stdio"
//	command [L"npx"]
//	args [[L"-y"] [L"--token=" V"GITHUB_TOKEN"] [V"LEVEL" D"info" E"debug"]]
//	env {"API_KEY" [L"literal"] "NODE_OPTIONS" [L"--max-old-space-size=1"]}
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
// A value is a list of segments in the order written: L"…" for a run of
// literal text (a run between two templates is one segment; an empty one
// is omitted), and for each template V"NAME", then D"…" when it has a
// default, then E"…" (its expanded text) unless its stretch is secret.
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
	b = fpValue(b, d.Command, m.Command)
	b = append(b, "\nargs ["...)
	for i, a := range m.Args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = fpValue(b, d.Args[i], a)
	}
	b = append(b, "]\nenv "...)
	b = fpMap(b, m.Env, d.Env)
	b = append(b, "\ncwd "...)
	b = fpValue(b, d.Cwd, m.Cwd)
	b = append(b, "\nurl "...)
	b = fpValue(b, d.URL, m.URL)
	b = append(b, "\nheaders "...)
	b = fpMap(b, m.Headers, d.Headers)
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

// fpMap writes a map of values as {key value key value …}, keys sorted;
// written holds each value's template as written.
func fpMap(b []byte, m map[string]Value, written map[string]string) []byte {
	b = append(b, '{')
	var keyBuf [matKeyBuf]string
	for i, k := range matSortedKeysInto(keyBuf[:0], m) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ' ')
		b = fpValue(b, written[k], m[k])
	}
	return append(b, '}')
}

// fpValue writes the segments of v, the materialization of the template
// written (see fpEncode): its literal runs and templates in order, each
// template's marker, default and, unless secret, expansion (the k-th
// stretch of v is the k-th template of written).
func fpValue(b []byte, written string, v Value) []byte {
	b = append(b, '[')
	first := true
	k, i := 0, 0
	for {
		j := strings.Index(written[i:], "${")
		if j < 0 {
			break
		}
		at := i + j
		p, n := matParseTemplate(written[at:])
		if n == 0 {
			break // never after a successful Materialize
		}
		if at > i {
			b = fpSegment(b, &first, 'L', written[i:at])
		}
		b = fpSegment(b, &first, 'V', p.name)
		if p.hasDefault {
			b = fpSegment(b, &first, 'D', p.text)
		}
		if k < len(v.Stretches) {
			if s := v.Stretches[k]; !s.Secret {
				b = fpSegment(b, &first, 'E', v.Text[s.Start:s.End])
			}
		}
		k++
		i = at + n
	}
	if i < len(written) {
		b = fpSegment(b, &first, 'L', written[i:])
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
