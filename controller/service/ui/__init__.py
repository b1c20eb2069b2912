"""The read-only web page for reviewers and operators (``ui.listen``).

What waits for whom, what runs, what failed: the daemon publishes a snapshot of its plans
after every pass (:class:`~controller.service.ui.data.UiData`); requests read that snapshot
and, for one plan, its files, bounded in size. Nothing a request does can change a plan or
wait on the controller's pass. Pages are rendered on the server (:mod:`.render`), every
string from a plan, a commit or a tool escaped; each page has a JSON twin under ``/api``.
"""
