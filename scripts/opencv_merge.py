#!/usr/bin/env python3
"""Anchor for the develop benchmark: OpenCV AlignMTB + MergeMertens, JPEG q92."""
import sys

import cv2
import numpy as np


def main():
    out, inputs = sys.argv[1], sys.argv[2:]
    images = [cv2.imread(p) for p in inputs]
    cv2.createAlignMTB().process(images, images)
    fused = cv2.createMergeMertens().process(images)
    cv2.imwrite(out, np.clip(fused * 255, 0, 255).astype("uint8"), [cv2.IMWRITE_JPEG_QUALITY, 92])


if __name__ == "__main__":
    main()
