"""Which login a credential posts under (docs/architecture.md "Receipt reader"), for ``GitHubForge``.

``ghs_`` tokens try GraphQL ``viewer`` first; others ``/user`` → ``/app`` → GraphQL.  Each answer
is checked at the seam (``fullsend.adapters.github.wire``): ``{"data": "x"}``, an ``errors``
object, a login of the wrong type are causes like any failed request, never an exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fullsend.adapters.github.graphql import VIEWER_QUERY, GraphQLClient, viewer_login
from fullsend.adapters.github.ratelimit import WaitBound
from fullsend.adapters.github.transport import Transport
from fullsend.adapters.github.wire import App, AuthenticatedUser, parse
from fullsend.errors import ForgeError, RateLimited

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Credential

INSTALLATION_PREFIX = "ghs_"  # an installation token: its login is read through GraphQL first


class LoginResolution:
    """Mixin of ``GitHubForge``: ``viewer_login`` and the App spelling of a GraphQL login.

    The forge provides the attributes below and the two clients of a credential.
    """

    _logins: dict[str, str]
    _tokens: dict[str, str]
    _integration: set[str]
    _bound: WaitBound

    def _t(self, credential: Credential) -> Transport:
        raise NotImplementedError

    def _gql(self, credential: Credential) -> GraphQLClient:
        raise NotImplementedError

    def viewer_login(self, credential: Credential) -> str:
        """Resolve the login a credential posts under, once per run.

        ``ghs_`` tokens try GraphQL ``viewer`` first; others ``/user`` → ``/app`` → GraphQL.
        Raises ``ForgeError`` naming every cause when all fail (``RateLimited`` when a rate limit
        was among them: nothing was sent into it).
        """
        if credential in self._logins:
            return self._logins[credential]
        token = self._tokens[credential]
        if not token:
            raise ForgeError("no token to resolve a login from")
        order = [self._graphql_viewer, self._rest_user, self._rest_app]
        if not token.startswith(INSTALLATION_PREFIX):
            order = [self._rest_user, self._rest_app, self._graphql_viewer]
        causes: list[str] = []
        limited: RateLimited | None = None
        for step in order:
            try:
                login = step(credential)
            except ForgeError as exc:
                causes.append(str(exc))
                limited = limited or (exc if isinstance(exc, RateLimited) else None)
                if step == self._rest_user and exc.status == 403 and not isinstance(exc, RateLimited):
                    self._integration.add(credential)  # "not accessible by integration": an App token
                continue
            self._logins[credential] = login
            return login
        message = "could not resolve the login: " + "; ".join(causes)
        if limited is not None:
            raise RateLimited(message, limited.until, limited.wait_s, limited.status)
        raise ForgeError(message)

    def _rest_user(self, credential: Credential) -> str:
        data = self._t(credential).request("GET", "/user", bound=self._bound).data
        return parse(AuthenticatedUser, data, "GET /user").login

    def _rest_app(self, credential: Credential) -> str:
        data = self._t(credential).request("GET", "/app", bound=self._bound).data
        slug = parse(App, data, "GET /app").slug
        if slug is None:  # GitHub's schema leaves it optional: this route knows no login, the next may
            raise ForgeError("GET /app: the App record has no slug field, so its login is unknown")
        return slug + "[bot]"

    def _graphql_viewer(self, credential: Credential) -> str:
        data = self._gql(credential).query("viewer", VIEWER_QUERY, None, self._bound)
        return self.app_spelling(credential, viewer_login(data))

    def app_spelling(self, credential: Credential, login: str) -> str:
        """A GraphQL login as REST spells it: an installation token acts as an App, ``name[bot]``."""
        is_app = self._tokens[credential].startswith(INSTALLATION_PREFIX) or credential in self._integration
        if is_app and not login.lower().endswith("[bot]"):
            return login + "[bot]"
        return login
