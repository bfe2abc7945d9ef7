package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rfcVars are the variables of RFC 6570's examples (section 3.2), the
// string ones.
var rfcVars = map[string]string{
	"var": "value", "hello": "Hello World!", "path": "/foo/bar", "empty": "",
	"x": "1024", "y": "768", "base": "http://example.com/home/", "who": "fred",
	"v": "6", "half": "50%", "dub": "me/too",
}

func TestURITemplateExpandRFC(t *testing.T) {
	for _, tc := range []struct{ tpl, want string }{
		// Level 1
		{"{var}", "value"},
		{"{hello}", "Hello%20World%21"},
		{"{half}", "50%25"},
		{"O{empty}X", "OX"},
		{"O{undef}X", "OX"},
		// Level 2
		{"{+var}", "value"},
		{"{+hello}", "Hello%20World!"},
		{"{+path}/here", "/foo/bar/here"},
		{"here?ref={+path}", "here?ref=/foo/bar"},
		{"{+base}index", "http://example.com/home/index"},
		{"{#var}", "#value"},
		{"{#hello}", "#Hello%20World!"},
		{"X{#var}", "X#value"},
		{"{+half}", "50%25"},
		// Level 3
		{"map?{x,y}", "map?1024,768"},
		{"{x,hello,y}", "1024,Hello%20World%21,768"},
		{"{+x,hello,y}", "1024,Hello%20World!,768"},
		{"{+path,x}/here", "/foo/bar,1024/here"},
		{"{#x,hello,y}", "#1024,Hello%20World!,768"},
		{"X{.var}", "X.value"},
		{"X{.x,y}", "X.1024.768"},
		{"{/var}", "/value"},
		{"{/var,x}/here", "/value/1024/here"},
		{"{;x,y}", ";x=1024;y=768"},
		{"{;x,y,empty}", ";x=1024;y=768;empty"},
		{"{?x,y}", "?x=1024&y=768"},
		{"{?x,y,empty}", "?x=1024&y=768&empty="},
		{"?fixed=yes{&x}", "?fixed=yes&x=1024"},
		{"{&x,y,empty}", "&x=1024&y=768&empty="},
		{"{?undef}", ""},
		// Level 4, string values
		{"{var:3}", "val"},
		{"{var:30}", "value"},
		{"{+path:6}/here", "/foo/b/here"},
		{"{/var:1,var}", "/v/value"},
		{"{;hello:5}", ";hello=Hello"},
		{"{var*}", "value"},
		{"{/dub*}", "/me%2Ftoo"},
		{"{?who*}", "?who=fred"},
	} {
		tpl, ok := ParseURITemplate(tc.tpl)
		require.True(t, ok, tc.tpl)
		got, ok := tpl.Expand(rfcVars)
		require.True(t, ok, tc.tpl)
		assert.Equal(t, tc.want, got, tc.tpl)
	}
}

func TestURITemplateParse(t *testing.T) {
	tpl, ok := ParseURITemplate("test://static/{id}{?q,id}{/p*}")
	require.True(t, ok)
	assert.Equal(t, []string{"id", "q", "p"}, tpl.Vars())
	for _, bad := range []string{
		"{", "}", "a{b", "a}b", "{}", "{=x}", "{,x}", "{!x}", "{@x}", "{|x}", "{x,}", "{x y}",
		"{x:0}", "{x:10000}", "{x:-1}", "{x:+1}", "{x:}", "{.x.}", "{x..y}", "{%zz}", "{{x}}",
		"\xff{x}", strings.Repeat("a", MaxTemplateLen+1),
		"{" + strings.TrimSuffix(strings.Repeat("v,", MaxTemplateVars+1), ",") + "}",
	} {
		_, ok := ParseURITemplate(bad)
		assert.False(t, ok, "%q", bad)
	}
}

func TestURITemplateSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		tpl    string
		vars   map[string]string
		want   string
		reason string
	}{
		{"test://static/resource/{id}", map[string]string{"id": "1"}, "test://static/resource/1", ""},
		{"test://static/resource/{id}", map[string]string{"id": "../@evil/x"}, "test://static/resource/..%2F%40evil%2Fx", ""},
		{"test://static/{+p}", map[string]string{"p": "a/b?c"}, "test://static/a/b?c", ""},
		{"test://static/{+p}", map[string]string{"p": "@evil.example/x"}, "test://static/@evil.example/x", ""},
		{"file:///{+path}", map[string]string{"path": "etc/hosts"}, "file:///etc/hosts", ""},
		{"mailto:{who}", map[string]string{"who": "a@b"}, "mailto:a%40b", ""},
		{"https://api.example/{x}{?q}", map[string]string{"q": "1"}, "https://api.example/?q=1", ""},
		// The authority goes on in a reserved expansion.
		{"test://static{+p}", map[string]string{"p": "@evil.example"}, "", ReasonTemplateOrigin},
		{"test://static{+p}", map[string]string{"p": "/x"}, "test://static/x", ""},
		{"test://static{/p}", map[string]string{"p": "x"}, "test://static/x", ""},
		{"test://static{/p}x", map[string]string{}, "", ReasonTemplateOrigin},
		// No literal scheme.
		{"{+uri}", map[string]string{"uri": "https://evil.example/"}, "", ReasonTemplateOrigin},
		{"{scheme}://x/", map[string]string{"scheme": "https"}, "", ReasonTemplateOrigin},
		// A variable host.
		{"https://{host}/x", map[string]string{"host": "evil.example"}, "", ReasonTemplateOrigin},
		// An opaque template given an authority.
		{"test:{+p}", map[string]string{"p": "//evil.example/x"}, "", ReasonTemplateOrigin},
		{"test:/{+p}", map[string]string{"p": "/evil.example/x"}, "", ReasonTemplateOrigin},
		{"test:{+p}", map[string]string{"p": "a/b"}, "test:a/b", ""},
		{"t://h/{+p}", map[string]string{"p": strings.Repeat("a", MaxExpandedLen)}, "", ReasonURITooLong},
	} {
		tpl, ok := ParseURITemplate(tc.tpl)
		require.True(t, ok, tc.tpl)
		got, reason := tpl.ExpandSameOrigin(tc.vars)
		assert.Equal(t, tc.reason, reason, tc.tpl)
		assert.Equal(t, tc.want, got, tc.tpl)
	}
}

// FuzzURITemplate feeds any template and values: parsing and expansion
// never panic, an expansion stays within MaxExpandedLen, contains only
// URI characters, and ExpandSameOrigin never returns a URI whose origin
// differs from the template's literal one.
func FuzzURITemplate(f *testing.F) {
	f.Add("test://static/resource/{id}", "1", "x")
	f.Add("test://static{+p}", "@evil", "y")
	f.Add("{+a}{#b}{?a,b}{;a}{.b}{/a:3}", "//h/x", "%41")
	f.Add("file:///{+a}", "../../etc", "")
	f.Fuzz(func(t *testing.T, tplText, a, b string) {
		tpl, ok := ParseURITemplate(tplText)
		if !ok {
			return
		}
		vars := map[string]string{}
		for i, name := range tpl.Vars() {
			if i%2 == 0 {
				vars[name] = a
			} else {
				vars[name] = b
			}
		}
		u, ok := tpl.Expand(vars)
		if !ok {
			return
		}
		if len(u) > MaxExpandedLen {
			t.Fatalf("expansion of %d bytes", len(u))
		}
		for i := 0; i < len(u); i++ {
			c := u[i]
			if !unreserved(c) && !reservedChar(c) && c != '%' {
				t.Fatalf("byte %#x in an expansion", c)
			}
		}
		if s, reason := tpl.ExpandSameOrigin(vars); reason == "" {
			ts, ta, th, ok := tpl.fixedOrigin()
			us, ua, uh, uok := uriOrigin(s)
			if !ok || !uok || ts != us || ta != ua || th != uh {
				t.Fatalf("origin changed: %q", s)
			}
		}
	})
}
