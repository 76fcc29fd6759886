// Package backends talks to the model servers that run Porchlight's generative
// features (indoor and outdoor staging, mess cleaner, declutter and, when the config
// says so, the magic eraser). One interface, Backend, hides the protocols; one adapter
// per protocol implements it in a subpackage (iopaint, comfyui, a1111, openai, remote),
// and package adapters builds a Registry of them from the configuration:
//
//	backends:
//	  studio_gpu:
//	    type: comfyui               # comfyui, iopaint, a1111, openai or remote
//	    url: http://127.0.0.1:8188
//	    timeout: 10m                # the whole job, upload to download
//	    workflows:
//	      indoor_staging: /etc/porchlight/staging.json
//	features:
//	  indoor_staging: studio_gpu
//
// This package holds what the adapters share: the request and the interface, the
// configuration of one backend (Spec), the Registry, an HTTP caller with timeouts
// and retries (reads after 5xx, 429 and connection errors; a request that starts a
// job only when it provably did not start), and the image codings the protocols use
// (8-bit sRGB PNG photos, RGBA where an endpoint needs alpha, masks as gray,
// alpha-inverted or white-on-transparent PNGs, answers decoded and checked).
//
// Adapters return what the model produced; they never fall back to the input. The
// pipeline's generative steps build the prompts, check the answer and bring it back
// to the photo's size.
package backends
