"""The programs people use: the ``zhuoji`` CLI, the HTTP service and its web page, live table mode."""
