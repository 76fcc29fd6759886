#!/usr/bin/python3
"""Anchor fills for the magic eraser's benchmark (make bench-eraser).

usage: bench_inpaint.py IMAGE MASK OUTDIR [METHOD...]

IMAGE is an 8-bit image with the hole blanked, MASK an 8-bit mask (non-zero = hole).
Writes OUTDIR/METHOD.png for each method (default: all) and OUTDIR/times.txt with
the seconds each took. Each runs with the parameters its documentation recommends:

  telea, ns   cv2.inpaint, radius 3 (the OpenCV tutorial's value)
  shiftmap    cv2.xphoto.inpaint INPAINT_SHIFTMAP, on Lab as in OpenCV's
              xphoto inpainting sample (He and Sun's statistics of patch offsets)
  fsr_best    cv2.xphoto.inpaint INPAINT_FSR_BEST (frequency selective
              reconstruction, best quality mode)
  gmic        G'MIC patch-based inpainting, "inpaint [mask],7,16": patch size 7 and
              lookup size 16 (the defaults of its Repair > Inpaint [patch-based]
              filter), the command's defaults for blending
"""
import os
import subprocess
import sys
import time

import cv2
import numpy as np

ALL = ("telea", "ns", "shiftmap", "fsr_best", "gmic")


def run(method, image, hole, image_path, mask_path, out):
    if method == "telea":
        return cv2.inpaint(image, hole, 3, cv2.INPAINT_TELEA)
    if method == "ns":
        return cv2.inpaint(image, hole, 3, cv2.INPAINT_NS)
    known = np.where(hole > 0, 0, 255).astype(np.uint8)  # xphoto: non-zero = valid
    if method == "shiftmap":
        lab = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
        dst = np.zeros_like(lab)
        cv2.xphoto.inpaint(lab, known, dst, cv2.xphoto.INPAINT_SHIFTMAP)
        return cv2.cvtColor(dst, cv2.COLOR_Lab2BGR)
    if method == "fsr_best":
        dst = np.zeros_like(image)
        cv2.xphoto.inpaint(image, known, dst, cv2.xphoto.INPAINT_FSR_BEST)
        return dst
    if method == "gmic":
        subprocess.run(["gmic", "-v", "-1", image_path, mask_path, "-gt[1]", "127",
                        "-inpaint[0]", "[1],7,16", "-keep[0]", "-cut", "0,255", "-o", out],
                       check=True)
        return None
    raise SystemExit("unknown method " + method)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    image_path, mask_path, out_dir = sys.argv[1:4]
    methods = sys.argv[4:] or ALL
    image = cv2.imread(image_path, cv2.IMREAD_COLOR)
    mask = cv2.imread(mask_path, cv2.IMREAD_GRAYSCALE)
    if image is None or mask is None:
        sys.exit("cannot read %s or %s" % (image_path, mask_path))
    hole = (mask > 127).astype(np.uint8) * 255
    times = []
    for m in methods:
        out = os.path.join(out_dir, m + ".png")
        t0 = time.time()
        res = run(m, image, hole, image_path, mask_path, out)
        if res is not None:
            cv2.imwrite(out, res)
        times.append("%s %.3f" % (m, time.time() - t0))
    with open(os.path.join(out_dir, "times.txt"), "w") as f:
        f.write("\n".join(times) + "\n")


if __name__ == "__main__":
    main()
