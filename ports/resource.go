package ports

// ReadRequest is one resources/read request.
type ReadRequest struct {
	// URI is the resource's URI.
	URI string
}

// ResourceContents is one item of a resources/read result. Exactly one of
// Text and Blob holds the data: IsBlob tells which (a text item may be
// empty). Every field is server data.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	// Blob is the decoded binary data of a blob item.
	Blob   []byte `json:"blob,omitempty"`
	IsBlob bool   `json:"isBlob,omitempty"`
}

// ReadResult is a resources/read result.
type ReadResult struct {
	Contents []ResourceContents `json:"contents"`
	// Truncated reports that the catalog's byte cap cut the contents (set
	// by the catalog, never by a session).
	Truncated bool `json:"truncated,omitempty"`
}

// ResourceUpdate is one notifications/resources/updated the host learns
// of: the resource at URI of server Server changed. It is a signal for the
// host, never a turn of a conversation.
type ResourceUpdate struct {
	Server string
	URI    string
}
