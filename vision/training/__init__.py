"""Training, quantization and evaluation of the tile models, and synthetic layouts: what does not run at a table.

Needs the `train` extra for training and quantizing (torch, ultralytics, onnx); nothing at run time imports it."""
