package rpc

// ServedCounts returns s's request counts by command name (ggml's names, "GRAPH_COMPUTE"), for
// the tests of package rpc_test.
func ServedCounts(s *Server) map[string]int64 { return s.servedCounts() }

// SentCounts returns the requests c sent (and the server took without closing the connection), by
// command name.
func SentCounts(c *Client) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int64{}
	for cmd, n := range c.sent {
		if n > 0 {
			m[cmdName(byte(cmd))] = n
		}
	}
	return m
}
