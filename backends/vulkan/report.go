package vulkan

import (
	"fmt"
	"io"
)

// ShutdownAndReport shuts the package down (so leaks show) and writes every validation-layer
// message to w. It reports whether there were none; test mains use it to fail a run under
// TANDEM_VK_VALIDATE=1. Every message since the process started counts, whichever test raised
// it. A nil w writes nothing (the result still says whether there were messages).
func ShutdownAndReport(w io.Writer) bool {
	if w == nil {
		w = io.Discard
	}
	if err := Shutdown(); err != nil {
		fmt.Fprintln(w, "Vulkan shutdown:", err)
	}
	msgs := ValidationMessages()
	if len(msgs) > 0 {
		fmt.Fprintf(w, "Vulkan validation reported %d messages:\n", len(msgs))
		for _, s := range msgs {
			fmt.Fprintln(w, "  ", s)
		}
	}
	return len(msgs) == 0
}
