package entries

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/ports"
)

// ServerResources is the stable JSON shape of one server of resources
// --json.
type ServerResources struct {
	Name      string             `json:"name"`
	State     string             `json:"state"`
	Class     string             `json:"class"`
	Reason    string             `json:"reason"`
	Resources []Resource         `json:"resources"`
	Templates []Template         `json:"templates"`
	Rejected  []catalog.Rejected `json:"rejected"`
}

// Resource is one resource of resources --json.
type Resource struct {
	// Name is the host-facing name; ResourceName the server's name.
	Name         string `json:"name"`
	URI          string `json:"uri"`
	ResourceName string `json:"resource_name"`
	Title        string `json:"title"`
	Description  string `json:"description"`
	MIMEType     string `json:"mime_type"`
	Size         int64  `json:"size"`
}

// Template is one resource template of resources --json.
type Template struct {
	Name         string   `json:"name"`
	URITemplate  string   `json:"uri_template"`
	TemplateName string   `json:"template_name"`
	Title        string   `json:"title"`
	Description  string   `json:"description"`
	MIMEType     string   `json:"mime_type"`
	Variables    []string `json:"variables"`
}

// ToServerResources returns the resources --json shape of r, with cat
// its catalog (nil when it has none).
func ToServerResources(r composition.ServerStatus, cat *catalog.Catalog) ServerResources {
	j := ServerResources{Name: r.Name, State: string(r.State), Class: view.ClassOf(r), Reason: r.Reason,
		Resources: []Resource{}, Templates: []Template{},
		Rejected: rejectedOf(r, ports.ListResources, ports.ListResourceTemplates)}
	if cat != nil {
		for _, x := range cat.Resources {
			j.Resources = append(j.Resources, Resource{Name: x.HostName(), URI: x.URI(), ResourceName: x.Name(), Title: x.Title(),
				Description: x.Description(), MIMEType: x.MIMEType(), Size: x.Size()})
		}
		for _, t := range cat.ResourceTemplates {
			j.Templates = append(j.Templates, Template{Name: t.HostName(), URITemplate: t.URITemplate(), TemplateName: t.Name(),
				Title: t.Title(), Description: t.Description(), MIMEType: t.MIMEType(), Variables: t.Vars()})
		}
	}
	return j
}

// WriteResources writes resources' text for r: its state, each resource's
// URI, MIME type and name or first line of description, each template the
// same, and the rejected entries.
func WriteResources(w io.Writer, r composition.ServerStatus, cat *catalog.Catalog) {
	fmt.Fprintf(w, "%s: %s\n", termsafe.Line(r.Name), termsafe.Line(StateLine(r)))
	if cat != nil && len(cat.Resources)+len(cat.ResourceTemplates) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, x := range cat.Resources {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", termsafe.Line(x.URI()), view.Dash(termsafe.Line(x.MIMEType())), about(x.Name(), x.Description()))
		}
		for _, t := range cat.ResourceTemplates {
			fmt.Fprintf(tw, "  template %s\t%s\t%s\n", termsafe.Line(t.URITemplate()), view.Dash(termsafe.Line(t.MIMEType())), about(t.Name(), t.Description()))
		}
		_ = tw.Flush()
	} else if r.State == composition.StateConnected {
		fmt.Fprintln(w, "  (no resources)")
	}
	writeRejected(w, r, ports.ListResources, ports.ListResourceTemplates)
}

// about is a name and the first line of a description, made safe.
func about(name, desc string) string {
	d := FirstLine(desc)
	switch {
	case name == "":
		return d
	case d == "":
		return termsafe.Line(name)
	}
	return termsafe.Line(name) + ": " + d
}

// ReadResult is read --json's output.
type ReadResult struct {
	Server    string     `json:"server"`
	URI       string     `json:"uri"`
	Truncated bool       `json:"truncated"`
	Contents  []Contents `json:"contents"`
}

// Contents is one item of read --json: Text for a text item, Blob (base64
// in JSON) for a blob item.
type Contents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mime_type"`
	Text     *string `json:"text,omitempty"`
	Blob     *[]byte `json:"blob,omitempty"`
}

// ToReadResult returns read --json's shape of res.
func ToReadResult(server, uri string, res ports.ReadResult) ReadResult {
	j := ReadResult{Server: server, URI: uri, Truncated: res.Truncated, Contents: []Contents{}}
	for _, c := range res.Contents {
		item := Contents{URI: c.URI, MIMEType: c.MIMEType}
		if c.IsBlob {
			blob := c.Blob
			if blob == nil {
				blob = []byte{}
			}
			item.Blob = &blob
		} else {
			t := c.Text
			item.Text = &t
		}
		j.Contents = append(j.Contents, item)
	}
	return j
}

// WriteReadResult writes the contents for people: text items escaped
// (termsafe.Text), a placeholder with the size for a blob, every line but
// the first indented.
func WriteReadResult(w io.Writer, res ports.ReadResult) {
	var lines []string
	for _, c := range res.Contents {
		if c.IsBlob {
			lines = append(lines, "[blob "+strconv.Itoa(len(c.Blob))+" bytes"+mimeSuffix(c.MIMEType)+"]")
			continue
		}
		lines = append(lines, strings.Split(termsafe.Text(c.Text), "\n")...)
	}
	writeLines(w, lines)
}

func mimeSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ", " + termsafe.Line(m)
}
