#!/usr/bin/python3
"""OpenCV xphoto white balance, the anchors of bench-color.sh.

Usage: opencv_wb.py SRC_DIR GRAYWORLD_DIR LEARNING_DIR
Balances every PNG of SRC_DIR with grey-world and with the learning-based
method (OpenCV's shipped model), as the tools are used: on the encoded values.
"""
import os
import sys

import cv2


def main():
    src, gw_dir, lb_dir = sys.argv[1:4]
    os.makedirs(gw_dir, exist_ok=True)
    os.makedirs(lb_dir, exist_ok=True)
    gw = cv2.xphoto.createGrayworldWB()
    lb = cv2.xphoto.createLearningBasedWB()
    for name in sorted(os.listdir(src)):
        if not name.endswith(".png"):
            continue
        img = cv2.imread(os.path.join(src, name), cv2.IMREAD_UNCHANGED)
        if img is None:
            sys.exit("cannot read " + name)
        img = img[:, :, :3]
        lb.setRangeMaxVal(65535 if img.dtype == "uint16" else 255)
        cv2.imwrite(os.path.join(gw_dir, name), gw.balanceWhite(img))
        cv2.imwrite(os.path.join(lb_dir, name), lb.balanceWhite(img))


if __name__ == "__main__":
    main()
