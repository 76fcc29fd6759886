#!/usr/bin/python3
"""Reference fills for the magic eraser's quality test: OpenCV cv2.inpaint.

usage: opencv_inpaint.py IMAGE MASK OUTDIR RADIUS...

IMAGE is an 8-bit image with the hole already blanked, MASK an 8-bit mask (non-zero =
hole). For each radius it writes OUTDIR/ns_rR.png and OUTDIR/telea_rR.png.
"""
import os
import sys

import cv2


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    image_path, mask_path, out_dir = sys.argv[1:4]
    image = cv2.imread(image_path, cv2.IMREAD_COLOR)
    mask = cv2.imread(mask_path, cv2.IMREAD_GRAYSCALE)
    if image is None or mask is None:
        sys.exit("cannot read %s or %s" % (image_path, mask_path))
    mask = (mask > 0).astype("uint8") * 255
    for radius in (int(r) for r in sys.argv[4:]):
        for name, flag in (("ns", cv2.INPAINT_NS), ("telea", cv2.INPAINT_TELEA)):
            out = cv2.inpaint(image, mask, radius, flag)
            cv2.imwrite(os.path.join(out_dir, "%s_r%d.png" % (name, radius)), out)


if __name__ == "__main__":
    main()
