package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// PerfettoWriter is a Visitor writing the Chrome Trace Event JSON format
// that Perfetto (ui.perfetto.dev) and chrome://tracing open: one process
// per rank (pid = rank), one track per thread (tid = thread index), MPI
// calls as complete ("X") slices with their arguments, regions as "B"/"E"
// slices, user events as instant events, and each point-to-point message
// as a flow ("s" at the send, "f" at the matching receive, id derived from
// the channel and the message's sequence number on it, so both ends compute
// it without seeing each other).
type PerfettoWriter struct {
	w       *bufio.Writer
	n       int
	named   map[[2]int]bool
	Records uint64
	b       []byte
}

// NewPerfettoWriter starts the JSON array.
func NewPerfettoWriter(w io.Writer) *PerfettoWriter {
	p := &PerfettoWriter{w: bufio.NewWriterSize(w, 1<<16), named: map[[2]int]bool{}}
	p.w.WriteString("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")
	return p
}

// jq quotes s as a JSON string.
func jq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func us(t float64) string { return strconv.FormatFloat(t/1000, 'f', 3, 64) }

func (p *PerfettoWriter) emit(b []byte) {
	if p.n > 0 {
		p.w.WriteString(",\n")
	}
	p.n++
	p.w.Write(b)
	p.Records++
}

func (p *PerfettoWriter) track(rank, thread int) {
	k := [2]int{rank, thread}
	if p.named[k] {
		return
	}
	p.named[k] = true
	if !p.named[[2]int{rank, -1}] {
		p.named[[2]int{rank, -1}] = true
		p.emit([]byte(fmt.Sprintf(`{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"rank %d"}}`, rank, rank)))
		p.emit([]byte(fmt.Sprintf(`{"ph":"M","name":"process_sort_index","pid":%d,"tid":0,"args":{"sort_index":%d}}`, rank, rank)))
	}
	p.emit([]byte(fmt.Sprintf(`{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"thread %d"}}`, rank, thread, thread)))
}

func commName(g *GComm) string {
	if g == nil {
		return ""
	}
	if g.Key == "world" {
		return "MPI_COMM_WORLD"
	}
	return g.Key
}

func (p *PerfettoWriter) flow(ph string, c *Call, m *Msg, t float64) {
	if m.Flow == 0 {
		return
	}
	b := fmt.Appendf(p.b[:0], `{"ph":"%s","cat":"msg","name":"message","id":"0x%016x","pid":%d,"tid":%d,"ts":%s`, ph, m.Flow, c.Rank, c.Thread, us(t))
	if ph == "f" {
		b = append(b, `,"bp":"e"`...)
	}
	p.b = append(b, '}')
	p.emit(p.b)
}

// Call implements Visitor.
func (p *PerfettoWriter) Call(c *Call) error {
	p.track(c.Rank, c.Thread)
	b := fmt.Appendf(p.b[:0], `{"ph":"X","cat":"%s","name":%s,"pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{`,
		c.Class, jq(c.Fn), c.Rank, c.Thread, us(c.T0), us(c.T1-c.T0))
	sep := ""
	arg := func(k string, v any) {
		b = fmt.Appendf(b, "%s%s:", sep, jq(k))
		switch x := v.(type) {
		case string:
			b = append(b, jq(x)...)
		default:
			b = fmt.Appendf(b, "%v", x)
		}
		sep = ","
	}
	if c.Comm != nil {
		arg("comm", commName(c.Comm))
	}
	if m := c.Send; m != nil {
		arg("dest", m.Peer)
		arg("tag", m.Tag)
		arg("bytes", m.Bytes)
		if m.Req != 0 {
			arg("request", m.Req)
		}
	}
	if m := c.Recv; m != nil {
		arg("source", m.Peer)
		arg("recv_tag", m.Tag)
		arg("recv_bytes", m.Bytes)
	}
	if m := c.RecvPost; m != nil {
		arg("source", m.Peer)
		arg("tag", m.Tag)
		arg("request", m.Req)
	}
	for i, m := range c.StartSend {
		arg(fmt.Sprintf("started_send_%d", i), fmt.Sprintf("request %d to %d tag %d %d bytes", m.Req, m.Peer, m.Tag, m.Bytes))
	}
	for i, m := range c.StartRecv {
		arg(fmt.Sprintf("started_recv_%d", i), fmt.Sprintf("request %d from %d tag %d", m.Req, m.Peer, m.Tag))
	}
	for i, m := range c.RecvDone {
		arg(fmt.Sprintf("completed_recv_%d", i), fmt.Sprintf("request %d from %d tag %d %d bytes", m.Req, m.Peer, m.Tag, m.Bytes))
	}
	for i, m := range c.SendDone {
		arg(fmt.Sprintf("completed_send_%d", i), fmt.Sprintf("request %d to %d tag %d %d bytes", m.Req, m.Peer, m.Tag, m.Bytes))
	}
	if c.Coll {
		arg("bytes", c.CollBytes)
		if c.Root >= 0 {
			arg("root", c.Root)
		}
	}
	arg("callsite", fmt.Sprintf("0x%x", c.PC))
	p.b = append(b, "}}"...)
	p.emit(p.b)
	// Flow ends bind to the enclosing slice: place them inside it.
	mid := c.T0 + (c.T1-c.T0)/2
	if c.Send != nil {
		p.flow("s", c, c.Send, mid)
	}
	for i := range c.StartSend {
		p.flow("s", c, &c.StartSend[i], mid)
	}
	if c.Recv != nil {
		p.flow("f", c, c.Recv, mid)
	}
	for i := range c.RecvDone {
		p.flow("f", c, &c.RecvDone[i], mid)
	}
	return nil
}

// Region implements Visitor.
func (p *PerfettoWriter) Region(rank, thread int, enter bool, name string, t float64) error {
	p.track(rank, thread)
	ph := "E"
	if enter {
		ph = "B"
	}
	p.emit(fmt.Appendf(p.b[:0], `{"ph":"%s","cat":"region","name":%s,"pid":%d,"tid":%d,"ts":%s}`, ph, jq(name), rank, thread, us(t)))
	return nil
}

// Mark implements Visitor.
func (p *PerfettoWriter) Mark(rank, thread int, text string, t float64) error {
	p.track(rank, thread)
	p.emit(fmt.Appendf(p.b[:0], `{"ph":"i","s":"t","cat":"event","name":%s,"pid":%d,"tid":%d,"ts":%s}`, jq(text), rank, thread, us(t)))
	return nil
}

// Close ends the JSON document.
func (p *PerfettoWriter) Close() error {
	p.w.WriteString("\n]}\n")
	return p.w.Flush()
}
