package definition

import (
	"strconv"
	"strings"
	"testing"
)

// This file keeps the strings.Builder-based fingerprint encoder that fpAppend
// replaced, as the reference TestFingerprintEncodingReference and
// FuzzFingerprintEncoding compare fpEncode against byte for byte.

func fpEncodeReference(m *Materialized) []byte {
	d := m.Def
	var b strings.Builder
	b.WriteString(FingerprintVersion)
	b.WriteString("\nname ")
	b.WriteString(strconv.Quote(d.Name))
	b.WriteString("\nkind ")
	b.WriteString(strconv.Quote(string(d.Kind)))
	b.WriteString("\ncommand ")
	fpRefValue(&b, d.Command, m.Command)
	b.WriteString("\nargs [")
	for i, a := range m.Args {
		if i > 0 {
			b.WriteByte(' ')
		}
		fpRefValue(&b, d.Args[i], a)
	}
	b.WriteString("]\nenv ")
	fpRefMap(&b, m.Env, d.Env)
	b.WriteString("\ncwd ")
	fpRefValue(&b, d.Cwd, m.Cwd)
	b.WriteString("\nurl ")
	fpRefValue(&b, d.URL, m.URL)
	b.WriteString("\nheaders ")
	fpRefMap(&b, m.Headers, d.Headers)
	b.WriteString("\nheadersHelper ")
	fpRefStrings(&b, d.HeadersHelper)
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
			fpRefStrings(&b, o.Scopes)
		}
		b.WriteString(" callbackPort ")
		b.WriteString(strconv.Itoa(o.CallbackPort))
		b.WriteString(" metadataUrl ")
		b.WriteString(strconv.Quote(o.MetadataURL))
		if o.ClientMetadataURL != "" {
			b.WriteString(" clientMetadataUrl ")
			b.WriteString(strconv.Quote(o.ClientMetadataURL))
		}
		b.WriteByte('}')
	}
	b.WriteString("\nrequiresTrustedWorkspace ")
	b.WriteString(strconv.FormatBool(d.RequiresTrustedWorkspace))
	b.WriteString("\nrefusal ")
	b.WriteString(strconv.Quote(d.Refusal))
	b.WriteByte('\n')
	if d.IncludeTools != nil {
		b.WriteString("includeTools ")
		fpRefStrings(&b, d.IncludeTools)
		b.WriteByte('\n')
	}
	if d.ExcludeTools != nil {
		b.WriteString("excludeTools ")
		fpRefStrings(&b, d.ExcludeTools)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// fpRefMap writes a map of values as {key value key value …}, keys sorted.
func fpRefMap(b *strings.Builder, m map[string]Value, written map[string]string) {
	b.WriteByte('{')
	for i, k := range matSortedKeys(m) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(' ')
		fpRefValue(b, written[k], m[k])
	}
	b.WriteByte('}')
}

// fpRefValue writes v's segments from the parts of its template as
// written: literal parts as L, templates as V, D (with a default) and E
// (unless the matching stretch is secret).
func fpRefValue(b *strings.Builder, written string, v Value) {
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
	parts, _ := matParse(written)
	k := 0
	for _, p := range parts {
		if !p.template {
			seg('L', p.raw)
			continue
		}
		seg('V', p.name)
		if p.hasDefault {
			seg('D', p.text)
		}
		if st := v.Stretches[k]; !st.Secret {
			seg('E', v.Text[st.Start:st.End])
		}
		k++
	}
	b.WriteByte(']')
}

// fpRefStrings writes a string list, nil as null.
func fpRefStrings(b *strings.Builder, ss []string) {
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

func TestFingerprintEncodingReference(t *testing.T) {
	for _, fx := range fpTFixtures() {
		m := fpTMat(t, &fx.def, fx.vars)
		if got, want := string(fpEncode(m)), string(fpEncodeReference(m)); got != want {
			t.Fatalf("%s: fpEncode differs from the reference:\n got %q\nwant %q", fx.name, got, want)
		}
	}
}

// FuzzFingerprintEncoding builds a definition from fuzzed strings (as
// templates, keys and plain fields), materializes it and checks fpEncode
// against the reference encoder byte for byte.
func FuzzFingerprintEncoding(f *testing.F) {
	f.Add("id", "npx", "--token=${GITHUB_TOKEN}", "API_KEY", "${HOME}/x", "Authorization", "Bearer ${TOKEN:-dflt}", "https://h/${X}?a=1", true, 8080)
	f.Add("", "", "", "", "", "", "", "", false, 0)
	f.Add("\xff\"", "é${A}${B:-}", "${E}", "a=b", "\x00", "X-Api-Key", "${U}", "${bad", false, -1)
	f.Fuzz(func(t *testing.T, name, command, arg, envKey, envVal, hdrKey, hdrVal, url string, trusted bool, port int) {
		d := &Definition{
			Name: name, Kind: KindStdio, Command: command, Args: []string{arg, command, ""},
			Env: map[string]string{envKey: envVal, "PLAIN": arg}, Cwd: envVal, URL: url,
			Headers:                  map[string]string{hdrKey: hdrVal, "x-other": url},
			HeadersHelper:            []string{hdrVal},
			OAuth:                    &OAuth{ClientID: name, Scopes: []string{arg}, CallbackPort: port, MetadataURL: url},
			RequiresTrustedWorkspace: trusted,
			Refusal:                  hdrKey,
		}
		if port < 0 {
			d.OAuth, d.Args, d.Env = nil, nil, nil
		}
		lookup := func(v string) (string, bool) {
			if strings.HasPrefix(v, "U") {
				return "", false
			}
			return v + "-" + arg, true
		}
		m, err := Materialize(d, lookup)
		if err != nil {
			return
		}
		if got, want := string(fpEncode(m)), string(fpEncodeReference(m)); got != want {
			t.Fatalf("fpEncode differs from the reference:\n got %q\nwant %q", got, want)
		}
		if got, want := Fingerprint(m), Fingerprint(m); got != want || len(got) != 64 {
			t.Fatalf("fingerprint %q", got)
		}
	})
}
