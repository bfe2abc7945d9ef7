package catalog

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// URI templates (RFC 6570).
const (
	// MaxTemplateLen bounds the length in bytes of a URI template a
	// catalog admits; a longer one is rejected ("invalid_template").
	MaxTemplateLen = 2048
	// MaxTemplateVars bounds the variables of one template.
	MaxTemplateVars = 64
	// MaxExpandedLen bounds the length of an expanded URI: an expansion
	// that would be longer is refused ("uri_too_long").
	MaxExpandedLen = 8192
)

// URITemplate is a parsed RFC 6570 URI template. Expansion implements
// levels 1 to 4 for string values: every operator ("", +, #, ., /, ;, ?,
// &), variable lists, the prefix modifier ":n" and the explode modifier
// "*" (which changes nothing for a string value). A URITemplate is
// immutable and safe for concurrent use.
type URITemplate struct {
	raw   string
	parts []tplPart
	vars  []string
}

// tplPart is a literal (op == 0 and lit set) or an expression.
type tplPart struct {
	lit   string
	op    byte // 0 literal, ' ' simple, or one of +#./;?&
	specs []varSpec
}

type varSpec struct {
	name   string
	prefix int // 0: none
}

// ParseURITemplate parses s. It fails (ok false) on an unclosed or empty
// expression, a reserved operator (=,!@|), an invalid variable name or
// modifier, a template over MaxTemplateLen bytes or with more than
// MaxTemplateVars variables, or invalid UTF-8.
func ParseURITemplate(s string) (*URITemplate, bool) {
	if len(s) > MaxTemplateLen || !utf8.ValidString(s) {
		return nil, false
	}
	t := &URITemplate{raw: s}
	seen := map[string]bool{}
	nvars := 0
	for len(s) > 0 {
		i := strings.IndexAny(s, "{}")
		if i < 0 {
			t.parts = append(t.parts, tplPart{lit: s})
			break
		}
		if s[i] == '}' {
			return nil, false
		}
		if i > 0 {
			t.parts = append(t.parts, tplPart{lit: s[:i]})
		}
		s = s[i+1:]
		j := strings.IndexAny(s, "{}")
		if j < 0 || s[j] == '{' {
			return nil, false
		}
		expr := s[:j]
		s = s[j+1:]
		if expr == "" {
			return nil, false
		}
		p := tplPart{op: ' '}
		switch expr[0] {
		case '+', '#', '.', '/', ';', '?', '&':
			p.op = expr[0]
			expr = expr[1:]
		case '=', ',', '!', '@', '|':
			return nil, false
		}
		for v := range strings.SplitSeq(expr, ",") {
			spec, ok := parseVarSpec(v)
			if !ok {
				return nil, false
			}
			if nvars++; nvars > MaxTemplateVars {
				return nil, false
			}
			p.specs = append(p.specs, spec)
			if !seen[spec.name] {
				seen[spec.name] = true
				t.vars = append(t.vars, spec.name)
			}
		}
		t.parts = append(t.parts, p)
	}
	return t, true
}

func parseVarSpec(v string) (varSpec, bool) {
	var spec varSpec
	if name, ok := strings.CutSuffix(v, "*"); ok {
		v = name
	} else if name, n, ok := strings.Cut(v, ":"); ok {
		p, err := strconv.Atoi(n)
		if err != nil || p < 1 || p > 9999 || n[0] == '+' || n[0] == '0' {
			return spec, false
		}
		v, spec.prefix = name, p
	}
	if !validVarName(v) {
		return spec, false
	}
	spec.name = v
	return spec, true
}

// validVarName reports whether v is an RFC 6570 varname: varchars
// (ALPHA, DIGIT, '_', pct-encoded) with single dots between them.
func validVarName(v string) bool {
	if v == "" || v[0] == '.' || v[len(v)-1] == '.' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case c == '.':
			if v[i-1] == '.' {
				return false
			}
		case c == '%':
			if i+2 >= len(v) || !isHexDigit(v[i+1]) || !isHexDigit(v[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// String returns the template as written.
func (t *URITemplate) String() string { return t.raw }

// Vars returns the template's variable names in order of first use, in a
// new slice.
func (t *URITemplate) Vars() []string { return append([]string(nil), t.vars...) }

// opInfo is the RFC 6570 expansion table of one operator.
type opInfo struct {
	first, sep string
	named      bool
	ifemp      string
	reserved   bool // allow reserved characters (U+R)
}

func info(op byte) opInfo {
	switch op {
	case '+':
		return opInfo{sep: ",", reserved: true}
	case '#':
		return opInfo{first: "#", sep: ",", reserved: true}
	case '.':
		return opInfo{first: ".", sep: "."}
	case '/':
		return opInfo{first: "/", sep: "/"}
	case ';':
		return opInfo{first: ";", sep: ";", named: true}
	case '?':
		return opInfo{first: "?", sep: "&", named: true, ifemp: "="}
	case '&':
		return opInfo{first: "&", sep: "&", named: true, ifemp: "="}
	}
	return opInfo{sep: ","}
}

// Expand expands the template with vars (a variable absent from vars is
// undefined and expands to nothing, per RFC 6570). It returns false when
// the result would be longer than MaxExpandedLen.
func (t *URITemplate) Expand(vars map[string]string) (string, bool) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.op == 0 {
			b.WriteString(encode(p.lit, true))
			continue
		}
		in := info(p.op)
		first := true
		for _, spec := range p.specs {
			v, ok := vars[spec.name]
			if !ok {
				continue
			}
			if first {
				b.WriteString(in.first)
				first = false
			} else {
				b.WriteString(in.sep)
			}
			if spec.prefix > 0 && utf8.RuneCountInString(v) > spec.prefix {
				n := 0
				for i := range v {
					if n == spec.prefix {
						v = v[:i]
						break
					}
					n++
				}
			}
			if in.named {
				b.WriteString(spec.name)
				if v == "" {
					b.WriteString(in.ifemp)
					continue
				}
				b.WriteByte('=')
			}
			b.WriteString(encode(v, in.reserved))
			if b.Len() > MaxExpandedLen {
				return "", false
			}
		}
		if b.Len() > MaxExpandedLen {
			return "", false
		}
	}
	if b.Len() > MaxExpandedLen {
		return "", false
	}
	return b.String(), true
}

const hexDigits = "0123456789ABCDEF"

// encode percent-encodes every byte of s outside the unreserved set, or,
// when reserved is set, outside the unreserved and reserved sets (a
// well-formed pct-encoded triplet is then kept as it is).
func encode(s string, reserved bool) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		keep := unreserved(c) || reserved && (reservedChar(c) ||
			c == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]))
		if keep {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
	}
	if b == nil {
		return s
	}
	return string(b)
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func reservedChar(c byte) bool {
	return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}

// uriOrigin returns the scheme and authority of uri, lowercased, and
// whether it has a scheme. A URI without "//" after its scheme has no
// authority (""), which differs from every URI with one (hasAuth).
func uriOrigin(uri string) (scheme, auth string, hasAuth, ok bool) {
	i := strings.IndexByte(uri, ':')
	if i <= 0 || !validScheme(uri[:i]) {
		return "", "", false, false
	}
	scheme = strings.ToLower(uri[:i])
	rest := uri[i+1:]
	if !strings.HasPrefix(rest, "//") {
		return scheme, "", false, true
	}
	rest = rest[2:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	return scheme, strings.ToLower(rest), true, true
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// fixedOrigin returns the origin of the template's literal text before its
// first expression: its scheme, and its authority as far as the literal
// text goes ("" and no authority when it has no "//"). An expansion keeps
// the template's origin only when its own origin is exactly that one, so a
// variable that continues the authority, or starts one, changes it. ok is
// false when the literal text holds no complete scheme.
func (t *URITemplate) fixedOrigin() (scheme, auth string, hasAuth, ok bool) {
	prefix := ""
	for _, p := range t.parts {
		if p.op != 0 {
			break
		}
		prefix += p.lit
	}
	return uriOrigin(prefix)
}

// ExpandSameOrigin expands the template with vars and checks that the
// result has the origin (scheme and authority) the template's literal text
// fixes. It returns the URI and "", or "" and a reason word:
// ReasonTemplateOrigin for a template whose literal text fixes no origin
// or an expansion with another scheme or authority (a variable value that
// smuggles "//host" or "@host" in through a reserved expansion), and
// ReasonURITooLong for one over MaxExpandedLen.
func (t *URITemplate) ExpandSameOrigin(vars map[string]string) (string, string) {
	s, a, h, ok := t.fixedOrigin()
	if !ok {
		return "", ReasonTemplateOrigin
	}
	u, ok := t.Expand(vars)
	if !ok {
		return "", ReasonURITooLong
	}
	us, ua, uh, ok := uriOrigin(u)
	if !ok || us != s || ua != a || uh != h {
		return "", ReasonTemplateOrigin
	}
	return u, ""
}
