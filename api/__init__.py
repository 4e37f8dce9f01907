"""The programs people use: the ``zhuoji`` CLI, the HTTP service and its web page, live table mode."""

import os

# A last line against decompression bombs in image formats whose header nobody reads first: OpenCV refuses to
# allocate more pixels than this (vision.detect.MAX_PIXELS). OpenCV reads the variable once, when its codecs
# load, so it is set here, before anything in api/ imports cv2.
os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", "50000000")
