package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/mpiscope/mpiscope/internal/view"
)

const viewUsage = `usage: mpiscope view [-http host:port] [-open] [-allow-remote] jobdir [jobdir2]
  Serve the job directory's profile to the browser: the HTML report's plots
  and tables, a drill-down (function -> callsites -> ranks, rank -> partners),
  the timeline of a traced job, and live update while the job writes
  snapshots. With a second directory, /diff shows what changed from the
  first run to the second (as mpiscope diff), with the two runs' plots
  side by side. Binds 127.0.0.1 on a free port unless -http says
  otherwise, prints the URL and serves until interrupted. Only reads the
  directories.
`

// viewCmd runs mpiscope view until SIGINT or SIGTERM.
func viewCmd(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveView(ctx, args, stdout, stderr)
}

// serveView runs mpiscope view until ctx ends.
func serveView(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("view", flag.ContinueOnError)
	addr := fs.String("http", "127.0.0.1:0", "`host:port` to listen on (port 0: a free one)")
	open := fs.Bool("open", false, "open the page in a browser ($BROWSER, else xdg-open)")
	remote := fs.Bool("allow-remote", false, "serve clients that are not on this host (the data is served without authentication)")
	if err := parseFlags(fs, args, stdout, viewUsage); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return usageErr("view", "want a job directory (and at most one more), got %s", argList(fs.Args()))
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return fmt.Errorf("view %s: %v", dir, err)
	}
	opt := view.Options{AllowRemote: *remote}
	if fs.NArg() == 2 {
		opt.Compare = fs.Arg(1)
		if st, err := os.Stat(opt.Compare); err != nil || !st.IsDir() {
			if err == nil {
				err = errors.New("not a directory")
			}
			return fmt.Errorf("view %s: %v", opt.Compare, err)
		}
	}
	srv := view.New(dir, opt)
	if err := srv.Warm(); err != nil {
		fmt.Fprintf(stderr, "mpiscope view: warning: %v (the page shows the data once the job writes some)\n", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("view: %v", err)
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "mpiscope view: serving %s at %s (Ctrl-C to stop)\n", dir, url)
	if opt.Compare != "" {
		fmt.Fprintf(stdout, "mpiscope view: what changed in %s: %sdiff\n", opt.Compare, url)
	}
	if *open {
		openBrowser(url, stderr)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("view: %v", err)
	}
	return nil
}

// openBrowser starts a browser on url without waiting for it.
func openBrowser(url string, stderr io.Writer) {
	prog := os.Getenv("BROWSER")
	if prog == "" {
		prog = "xdg-open"
	}
	cmd := exec.Command(prog, url)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "mpiscope view: cannot open a browser (%v): open %s yourself\n", err, url)
		return
	}
	go cmd.Wait()
}
