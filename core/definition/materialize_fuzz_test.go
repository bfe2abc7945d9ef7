package definition

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
)

// fuzzTemplateRE is an independent, regexp-based statement of the template
// grammar, used as the oracle for FuzzMaterialize.
var fuzzTemplateRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-)([^}]*))?\}`)

// fuzzAlnumRE matches a default distinctive enough to search for.
var fuzzAlnumRE = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// fuzzCanaryPrefix opens every value a credential-shaped variable has in
// FuzzMaterialize.
const fuzzCanaryPrefix = "qzCANARY"

// fuzzLookup: credential-shaped names hold a canary; names starting with U
// are unset, with E empty; every other name holds val.
func fuzzLookup(val string) Lookup {
	return func(name string) (string, bool) {
		switch {
		case secret.IsCredentialName(name):
			return fuzzCanaryPrefix + name + "zq", true
		case strings.HasPrefix(name, "U"):
			return "", false
		case strings.HasPrefix(name, "E"):
			return "", true
		default:
			return val, true
		}
	}
}

// fuzzPositions is the oracle's statement of which templates of s stand
// where a credential goes: s with every template (found by
// fuzzTemplateRE) replaced by 8 NUL bytes, and the templates whose
// placeholder secret.PositionSpans covers.
func fuzzPositions(s string) map[int]bool {
	var sk strings.Builder
	var offs []int
	last := 0
	for _, m := range fuzzTemplateRE.FindAllStringIndex(s, -1) {
		sk.WriteString(s[last:m[0]])
		offs = append(offs, sk.Len())
		sk.WriteString("\x00\x00\x00\x00\x00\x00\x00\x00")
		last = m[1]
	}
	sk.WriteString(s[last:])
	pos := map[int]bool{}
	spans := secret.PositionSpans(sk.String())
	for k, off := range offs {
		for _, sp := range spans {
			if sp[0] < off+8 && off < sp[1] {
				pos[k] = true
			}
		}
	}
	return pos
}

// fuzzExpect expands s with the oracle: the text, the stretches, and
// whether s is invalid or which variables are missing.
func fuzzExpect(s string, lookup Lookup) (text string, stretches []Stretch, invalid bool, missing []string) {
	var b strings.Builder
	pos := 0
	positional := fuzzPositions(s)
	for k, m := range fuzzTemplateRE.FindAllStringSubmatchIndex(s, -1) {
		lit := s[pos:m[0]]
		if strings.Contains(lit, "${") {
			return "", nil, true, nil
		}
		b.WriteString(lit)
		name := s[m[2]:m[3]]
		hasDefault := m[4] >= 0
		def := ""
		if hasDefault {
			def = s[m[6]:m[7]]
			if strings.Contains(def, "${") {
				return "", nil, true, nil
			}
		}
		v, ok := lookup(name)
		fromDefault := false
		if hasDefault && (!ok || v == "") {
			v, fromDefault = def, true
		} else if !ok {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			pos = m[1]
			continue
		}
		start := b.Len()
		b.WriteString(v)
		stretches = append(stretches, Stretch{Start: start, End: b.Len(), Var: name, Default: fromDefault, Secret: secret.IsCredentialName(name) || positional[k]})
		pos = m[1]
	}
	if strings.Contains(s[pos:], "${") {
		return "", nil, true, nil
	}
	b.WriteString(s[pos:])
	slices.Sort(missing)
	return b.String(), stretches, false, missing
}

// FuzzMaterialize checks the template expander against the regexp oracle
// and checks that a credential-shaped variable's value never reaches the
// fingerprint encoding, a projection, the endpoint or an error.
func FuzzMaterialize(f *testing.F) {
	for _, s := range []string{
		"", "plain", "${A}", "x${A}y${B:-d}z", "${GITHUB_TOKEN}", "--token=${API_KEY:-ghp_default}",
		"${", "${}", "${A", "${A:-", "${A:-x", "${A:-${B}}", "${1}", "$${A}", "${UNSET}", "${E:-def}",
		"https://u:${DB_PASSWORD}@h/?token=${MCP_TOKEN}", "${A}${A}${UA}${UB}${UA}", "\xff${A}\x00",
		"Bearer ${A}", "--api-key=${A}", "//r.example/:_authToken=${A}", "https://u:${A}@h/?access_token=${B}&x=${C}",
		"--password=${A:-dflt} ${B}", "Basic ${A}${B}", "rk_live_${A}", "\x00\x00\x00\x00\x00\x00\x00\x00=${A}",
	} {
		f.Add(s, "value", true)
	}
	f.Add("${X}", "", false)
	f.Add("${X:-}", "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false)
	f.Fuzz(func(t *testing.T, tmpl, val string, http bool) {
		lookup := fuzzLookup(val)
		kind := KindStdio
		if http {
			kind = KindHTTP
		}
		d := &Definition{
			Name: "fuzz", Kind: kind,
			Command: "srv", Args: []string{tmpl, "lit", "--api-key", tmpl}, URL: "https://h/" + tmpl,
			Env:     map[string]string{"PLAIN": tmpl, "API_KEY": tmpl},
			Headers: map[string]string{"X-H": tmpl, "Authorization": tmpl},
		}
		m, err := Materialize(d, lookup)
		// The same text as the command, the cwd or the url's host: refused
		// exactly when one of its stretches is secret (checked below).
		dc := &Definition{Name: "fuzz", Kind: KindStdio, Command: tmpl, Cwd: tmpl}
		mc, errc := Materialize(dc, lookup)
		pd := ProjectDefinition(d)
		wantText, wantStretches, wantInvalid, wantMissing := fuzzExpect(tmpl, lookup)

		if !strings.Contains(tmpl, "${") {
			if err != nil {
				t.Fatalf("no template but error %v", err)
			}
			if m.Args[0].Text != tmpl || m.Args[0].Stretches != nil {
				t.Fatalf("no template but %q %v", m.Args[0].Text, m.Args[0].Stretches)
			}
		}

		canaryFree := !strings.Contains(tmpl, fuzzCanaryPrefix) && !strings.Contains(val, fuzzCanaryPrefix)

		switch {
		case wantInvalid:
			if refusal.ReasonOf(err) != ReasonInvalidTemplate || refusal.ClassOf(err) != refusal.Config {
				t.Fatalf("%q: want invalid_template, got %v", tmpl, err)
			}
			return
		case len(wantMissing) > 0:
			var me *MissingError
			if !errors.As(err, &me) || refusal.ClassOf(err) != refusal.Config {
				t.Fatalf("%q: want MissingError, got %v", tmpl, err)
			}
			if !slices.Equal(me.Missing, wantMissing) {
				t.Fatalf("%q: missing %v, want %v", tmpl, me.Missing, wantMissing)
			}
			return
		case err != nil:
			t.Fatalf("%q: unexpected error %v", tmpl, err)
		}

		anySecret := slices.ContainsFunc(wantStretches, func(s Stretch) bool { return s.Secret })
		switch {
		case anySecret && refusal.ReasonOf(errc) != RefusalSecretInCommand:
			t.Fatalf("%q: a secret stretch in the command gave %v", tmpl, errc)
		case !anySecret && errc != nil:
			t.Fatalf("%q: the command gave %v", tmpl, errc)
		case !anySecret && (mc.Command.Text != wantText || mc.Cwd.Text != wantText):
			t.Fatalf("%q: command %q", tmpl, mc.Command.Text)
		}
		if anySecret != (targetRefusal(dc) == RefusalSecretInCommand) {
			t.Fatalf("%q: Decode's refusal %q disagrees with Materialize's %v", tmpl, targetRefusal(dc), errc)
		}
		for _, v := range []Value{m.Args[0], m.Env["PLAIN"], m.Headers["X-H"]} {
			if v.Text != wantText {
				t.Fatalf("%q: text %q, want %q", tmpl, v.Text, wantText)
			}
			if !slices.Equal(v.Stretches, wantStretches) {
				t.Fatalf("%q: stretches %v, want %v", tmpl, v.Stretches, wantStretches)
			}
		}
		if !m.Env["API_KEY"].KeySecret || !m.Headers["Authorization"].KeySecret || m.Env["PLAIN"].KeySecret {
			t.Fatal("key secrecy wrong")
		}
		// After a credential-shaped flag, every stretch is secret.
		if after := m.Args[3]; !after.ArgSecret || m.Args[0].ArgSecret || after.Text != wantText || len(after.Stretches) != len(wantStretches) {
			t.Fatalf("%q: argument after --api-key: %+v", tmpl, after)
		}
		for _, s := range m.Args[3].Stretches {
			if !s.Secret {
				t.Fatalf("%q: stretch %v after --api-key is not secret", tmpl, s)
			}
		}
		// Under a credential-shaped key, every stretch is secret.
		for _, s := range m.Env["API_KEY"].Stretches {
			if !s.Secret {
				t.Fatalf("%q: stretch %v under API_KEY is not secret", tmpl, s)
			}
		}
		prev := 0
		for _, s := range m.Args[0].Stretches {
			if s.Start < prev || s.End < s.Start || s.End > len(m.Args[0].Text) {
				t.Fatalf("%q: stretch %v out of order or bounds", tmpl, s)
			}
			prev = s.End
			if !s.Default {
				v, ok := lookup(s.Var)
				if !ok || m.Args[0].Text[s.Start:s.End] != v {
					t.Fatalf("%q: stretch %v is %q, lookup gave %q", tmpl, s, m.Args[0].Text[s.Start:s.End], v)
				}
			}
			if secret.IsCredentialName(s.Var) && !s.Secret {
				t.Fatalf("stretch %v secrecy wrong", s)
			}
		}

		// A plain variable's value never shows after --api-key nor reaches
		// its fingerprint segment, when that value is distinctive enough to
		// look for.
		if len(val) >= 6 && fuzzAlnumRE.MatchString(val) && !strings.Contains(tmpl, val) &&
			!strings.Contains(secret.Redacted+"--api-key", val) && !strings.Contains(fmt.Sprint(m.Args[3].Stretches), val) {
			// What the literal text's own encoding spells is not the value:
			// the same definition with another value of the same length (of
			// a letter val does not hold) shows which occurrences it makes
			// (an escape "\x10" before literal zeros spells "000…").
			m2, err2 := Materialize(d, fuzzLookup(otherValue(val)))
			if err2 != nil {
				t.Fatalf("%q: another value of the same shape failed: %v", tmpl, err2)
			}
			if shown := Project(m).Args[3]; strings.Contains(shown, val) && !strings.Contains(Project(m2).Args[3], val) {
				t.Fatalf("%q: value %q shown after --api-key: %q", tmpl, val, shown)
			}
			if enc := string(fpValue(nil, d.Args[3], m.Args[3])); strings.Contains(enc, val) &&
				!strings.Contains(string(fpValue(nil, d.Args[3], m2.Args[3])), val) {
				t.Fatalf("%q: value %q hashed after --api-key: %q", tmpl, val, enc)
			}
		}

		if !canaryFree {
			return
		}
		p := Project(m)
		js, jerr := json.Marshal(p)
		if jerr != nil {
			t.Fatal(jerr)
		}
		for what, s := range map[string]string{
			"fingerprint encoding": string(fpEncode(m)),
			"projection JSON":      string(js),
			"projection %+v":       fmt.Sprintf("%+v", p),
			"materialized %+v":     fmt.Sprintf("%+v", m),
			"endpoint":             Endpoint(m),
		} {
			if strings.Contains(s, fuzzCanaryPrefix) {
				t.Fatalf("%q: secret variable value reached the %s: %q", tmpl, what, s)
			}
		}

		// ProjectDefinition never shows the default of a credential-shaped
		// variable (when that default is distinctive enough to look for).
		for _, sm := range fuzzTemplateRE.FindAllStringSubmatch(tmpl, -1) {
			if sm[2] == "" || !secret.IsCredentialName(sm[1]) {
				continue
			}
			def := sm[3]
			if len(def) < 4 || !fuzzAlnumRE.MatchString(def) || strings.Count(tmpl, def) != 1 ||
				strings.Contains(secret.Redacted+secret.RedactedVar(sm[1]), def) {
				continue
			}
			if strings.Contains(pd.Args[0], def) {
				t.Fatalf("%q: secret default %q shown in %q", tmpl, def, pd.Args[0])
			}
		}
	})
}

// otherValue is a value as long as v made of one letter v does not hold.
func otherValue(v string) string {
	for _, c := range "QRSTUVWXYZqrstuvwxyz0123456789" {
		if !strings.ContainsRune(v, c) {
			return strings.Repeat(string(c), len(v))
		}
	}
	return strings.Repeat("~", len(v))
}
