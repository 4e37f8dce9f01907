"""The pipeline every shell (CLI, HTTP API, web page, live mode) calls: one function per question, one typed answer.

Plain stages with typed values between them::

    photo bytes ─ pipeline.images ─▶ image ─ vision.detect ─▶ Detections ─ (calibration) ─ vision.layout ─▶ Layout
          ─ (vision.upright: faces) ─ vision.reading ─▶ Reading ─ pipeline.photo.hand_request ─▶ HandRequest
          ─ pipeline.hand.analyze ─▶ HandAnalysis
    SettleRequest ─ .to_table() ─ pipeline.hand.settle_table ─▶ SettleResponse;  DrawHand × 2–4 ─ pipeline.hand.chajiao

``pipeline.models`` (its base classes in ``pipeline.model_base``, the detector's answer in
``pipeline.detection_models``) and ``pipeline.table_models`` hold the typed values (they are also the HTTP contract, and what
``zhuoji … --json`` prints), ``pipeline.errors`` the one refusal. The pipeline imports ``scoring`` and ``vision``,
never ``api``; the shells import the pipeline (and ``tables``), never ``scoring`` or ``vision``.
"""
