//go:build gl && cgo

package gl

/*
#cgo pkg-config: egl
#include <stdlib.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif

// tandem_egl_open creates a headless OpenGL 4.3 core context (surfaceless, no X server) and
// makes it current on the calling thread. It returns 0 on success, else a step number; *err gets
// eglGetError().
static int tandem_egl_open(int debug, EGLDisplay *dpy, EGLContext *ctx, EGLint *err) {
	*err = EGL_SUCCESS;
	const char *ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	EGLDisplay d = EGL_NO_DISPLAY;
	PFNEGLGETPLATFORMDISPLAYEXTPROC gpd = (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (gpd != NULL && ext != NULL) {
		d = gpd(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
	}
	if (d == EGL_NO_DISPLAY) {
		d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
	}
	if (d == EGL_NO_DISPLAY) { *err = eglGetError(); return 1; }
	EGLint maj, min;
	if (!eglInitialize(d, &maj, &min)) { *err = eglGetError(); return 2; }
	if (!eglBindAPI(EGL_OPENGL_API)) { *err = eglGetError(); eglTerminate(d); return 3; }
	EGLint attr[] = {
		EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 3,
		EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
		EGL_CONTEXT_OPENGL_DEBUG, debug ? EGL_TRUE : EGL_FALSE,
		EGL_NONE,
	};
	// EGL_KHR_no_config_context: a compute-only context needs no framebuffer configuration.
	EGLContext c = eglCreateContext(d, (EGLConfig)0, EGL_NO_CONTEXT, attr);
	if (c == EGL_NO_CONTEXT) { *err = eglGetError(); eglTerminate(d); return 4; }
	// EGL_KHR_surfaceless_context: current without a surface.
	if (!eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, c)) {
		*err = eglGetError(); eglDestroyContext(d, c); eglTerminate(d); return 5;
	}
	*dpy = d;
	*ctx = c;
	return 0;
}

static void tandem_egl_close(EGLDisplay d, EGLContext c) {
	eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglDestroyContext(d, c);
	eglTerminate(d);
}

static void *tandem_egl_proc(const char *name) { return (void *)eglGetProcAddress(name); }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// eglContext is a current headless OpenGL context.
type eglContext struct {
	dpy C.EGLDisplay
	ctx C.EGLContext
}

var eglSteps = [...]string{1: "getting a display (surfaceless platform or default)", 2: "eglInitialize",
	3: "eglBindAPI(OpenGL)", 4: "creating an OpenGL 4.3 core context", 5: "making the context current without a surface"}

// openEGL creates an OpenGL 4.3 core context on the calling (locked) thread and makes it current.
func openEGL(debug bool) (*eglContext, error) {
	var e eglContext
	var code C.EGLint
	dbg := C.int(0)
	if debug {
		dbg = 1
	}
	if step := C.tandem_egl_open(dbg, &e.dpy, &e.ctx, &code); step != 0 {
		return nil, fmt.Errorf("EGL: %s failed (EGL error %#x)", eglSteps[step], int(code))
	}
	return &e, nil
}

func (e *eglContext) close() { C.tandem_egl_close(e.dpy, e.ctx) }

// eglProcAddress resolves a GL function through eglGetProcAddress (EGL 1.5 and
// EGL_KHR_get_all_proc_addresses resolve core functions too), for gl.InitWithProcAddrFunc.
func eglProcAddress(name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.tandem_egl_proc(cname)
}
