"""The one name the original imports from botocore."""


class ClientError(Exception):
    def __init__(self, error_response=None, operation_name=None):
        super().__init__(str(error_response))
        self.response = error_response or {"Error": {"Code": "Unknown"}}
