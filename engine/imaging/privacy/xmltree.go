package privacy

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// xnode is one element of an OpenCV FileStorage XML document. The format names list
// items "_" and keeps numbers as whitespace-separated text, so a small generic tree is
// easier to walk than struct tags.
type xnode struct {
	name     string
	attrs    []xml.Attr
	text     string
	children []*xnode
}

// parseXML reads a whole document into a tree, ignoring comments and processing
// instructions.
func parseXML(r io.Reader) (*xnode, error) {
	dec := xml.NewDecoder(r)
	dec.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	root := &xnode{name: "#document"}
	stack := []*xnode{root}
	text := [][]byte{nil} // character data of each open element
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xnode{name: t.Name.Local, attrs: t.Attr}
			top := stack[len(stack)-1]
			top.children = append(top.children, n)
			stack = append(stack, n)
			text = append(text, nil)
		case xml.EndElement:
			if len(stack) == 1 {
				return nil, errors.New("xml: unbalanced end element")
			}
			n := stack[len(stack)-1]
			n.text = strings.TrimSpace(string(text[len(text)-1]))
			stack = stack[:len(stack)-1]
			text = text[:len(text)-1]
		case xml.CharData:
			text[len(text)-1] = append(text[len(text)-1], t...)
		}
	}
	if len(stack) != 1 {
		return nil, errors.New("xml: document ends inside an element")
	}
	return root, nil
}

// child returns the first child element with the given name, or nil.
func (n *xnode) child(name string) *xnode {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// items returns the "_" list items of a sequence element.
func (n *xnode) items() []*xnode {
	if n == nil {
		return nil
	}
	out := make([]*xnode, 0, len(n.children))
	for _, c := range n.children {
		if c.name == "_" {
			out = append(out, c)
		}
	}
	return out
}

func (n *xnode) attr(name string) string {
	for _, a := range n.attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// numbers parses the element's text as whitespace-separated numbers.
func (n *xnode) numbers() ([]float64, error) {
	if n == nil {
		return nil, errors.New("missing element")
	}
	f := strings.Fields(n.text)
	out := make([]float64, len(f))
	for i, s := range f {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("<%s>: %w", n.name, err)
		}
		out[i] = v
	}
	return out, nil
}

// number parses a single numeric child element.
func (n *xnode) number(name string) (float64, error) {
	c := n.child(name)
	if c == nil {
		return 0, fmt.Errorf("missing <%s>", name)
	}
	v, err := c.numbers()
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("<%s>: want one number, got %d", name, len(v))
	}
	return v[0], nil
}
