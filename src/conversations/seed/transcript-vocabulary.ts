/**
 * Words for synthetic transcripts, per panel language. The seed draws message words from a
 * ranked vocabulary (Zipf-like: rank r about 1/r as often as rank 1): a written head of common
 * words in frequency order (function words, then shopping words with their plurals and verb
 * forms, accented where the language has accents), then a long generated tail of invented stems,
 * each in a few inflected forms of the language. Shared phrases (policies, order numbers) and
 * product names (brand, line, model number) are mixed in whole. All of it is small and fixed:
 * the seed passes it to Postgres as parameters and the tail is computed there from its rank.
 */
const HEAD: Record<string, string> = {
  en: `the you i to a and is for my it of can in your this order be have with on me we size do not
    please thanks if delivery what will are return how at shoes hello available shoe would product price
    an so that was there like help or one get know need from which when days still but
    orders delivered deliver it's color refund just jacket want here they stock did received model
    payment sorry any no card account day shipping returns item items ordered send sent check could
    exchange store free week also about sizes colors discount delivering deliveries tracking yes
    dress dresses coat jackets arrived arrive arriving warranty code invoice cart bought buy buying
    refunds refunded parcel parcels package packages address email phone laptop laptops bag bags
    wrong damaged broken missing replace replacement replaced cancel cancelled cancellation fit
    fits fitting small large wide narrow cheaper expensive sale sales offer offers gift gifts
    voucher vouchers coupon coupons charged charge charges battery batteries charger chargers
    recommend recommended recommending compare compared colour colours jeans shirts shirt boots
    trainers sofa sofas lamp lamps bike bikes watch watches organic coffee wine toys material
    leather cotton wool waterproof lightweight newsletter subscription loyalty points café naïve
    résumé fiancé`,
  fr: `le la de je vous les un une et pour est à ma mon ce pas que il en commande des du bonjour
    merci avez taille livraison votre sur avec nous peux produit qui si au est-ce j'ai prix
    disponible retour plus mais jours chaussures chaussure où quand commandes livré livrée livrer
    livraisons comment aussi reçu reçue couleur remboursement veste stock article articles paiement
    désolé compte carte semaine expédition expédié expédiée échange échanger magasin gratuit gratuite
    tailles couleurs remise suivi oui robe robes manteau vestes arrivé arrivée arriver garantie code
    facture panier acheté acheter achat achats remboursé remboursée rembourser colis adresse
    téléphone ordinateur ordinateurs sac sacs erreur abîmé abîmée cassé manquant remplacer
    remplacement annuler annulé annulée annulation petit petite grand grande large étroit cher
    chère soldes offre offres cadeau cadeaux bon bons chargé batterie batteries chargeur
    chargeurs recommander recommandé comparer comparé jean jeans chemise chemises bottes baskets
    canapé canapés lampe lampes vélo vélos montre montres bio café vin jouets matière cuir coton
    laine imperméable léger légère abonnement fidélité points délai délais réclamation`,
  de: `ich die der und sie ist das ein eine zu nicht ist mit es den für Sie mein meine haben auf
    bitte danke Bestellung können wie Größe Lieferung was wann ist noch kann wird Hallo Produkt Preis
    verfügbar Rückgabe Schuhe Schuh aber Tage bestellt geliefert liefern Lieferungen Bestellungen
    auch erhalten Farbe Rückerstattung Jacke Lager Artikel Zahlung leider Konto Karte Woche
    Versand versendet versandt Umtausch umtauschen Geschäft kostenlos Größen Farben Rabatt
    Sendungsverfolgung ja Kleid Kleider Mantel Jacken angekommen ankommen Garantie Code Rechnung
    Warenkorb gekauft kaufen Kauf Käufe erstattet erstatten Paket Pakete Adresse Telefon Laptop
    Laptops Tasche Taschen falsch beschädigt kaputt fehlt ersetzen Ersatz stornieren storniert
    Stornierung klein kleine groß große weit eng teuer günstiger Angebot Angebote Geschenk Geschenke
    Gutschein Gutscheine Akku Akkus Ladegerät Ladegeräte empfehlen empfohlen vergleichen
    verglichen Jeans Hemd Hemden Stiefel Turnschuhe Sofa Sofas Lampe Lampen Fahrrad Fahrräder Uhr
    Uhren Bio Kaffee Wein Spielzeug Material Leder Baumwolle Wolle wasserdicht leicht Abonnement
    Treuepunkte Lieferzeit Reklamation Umtauschfrist Größentabelle`,
  it: `il la di che è un una per e non mi ho il mio mia con in ordine vorrei grazie buongiorno taglia
    consegna può prodotto prezzo sono se disponibile reso come quando giorni scarpe scarpa ma
    ordini ordinato consegnato consegnata consegnare consegne anche ricevuto colore rimborso
    giacca magazzino articolo articoli pagamento scusi conto carta settimana spedizione spedito
    spedita cambio cambiare negozio gratuito gratuita taglie colori sconto tracciamento sì
    vestito vestiti cappotto giacche arrivato arrivata arrivare garanzia codice fattura carrello
    comprato comprare acquisto acquisti rimborsato rimborsare pacco pacchi indirizzo telefono
    portatile portatili borsa borse sbagliato danneggiato rotto mancante sostituire sostituzione
    annullare annullato annullamento piccolo piccola grande largo stretto caro saldi offerta
    offerte regalo regali buono buoni batteria batterie caricabatterie consigliare consigliato
    confrontare jeans camicia camicie stivali divano divani lampada lampade bici orologio orologi
    biologico caffè vino giocattoli materiale pelle cotone lana impermeabile leggero leggera
    abbonamento fedeltà punti perché già più città qualità`,
  es: `el la de que y en un una es por mi no para lo con los me pedido tiene hola gracias talla
    envío puedo producto precio si está disponible devolución cómo cuándo días zapatos zapato pero
    pedidos pedí entregado entregada entregar entregas también recibido color reembolso chaqueta
    existencias artículo artículos pago lo siento cuenta tarjeta semana envíos enviado enviada
    cambio cambiar tienda gratis tallas colores descuento seguimiento sí vestido vestidos abrigo
    chaquetas llegado llegó llegar garantía código factura carrito comprado comprar compra compras
    reembolsado reembolsar paquete paquetes dirección teléfono portátil portátiles bolso bolsos
    equivocado dañado roto falta sustituir sustitución cancelar cancelado cancelación pequeño
    pequeña grande ancho estrecho caro rebajas oferta ofertas regalo regalos cupón cupones batería
    baterías cargador cargadores recomendar recomendado comparar vaqueros camisa camisas botas
    zapatillas sofá sofás lámpara lámparas bicicleta bicicletas reloj relojes ecológico café vino
    juguetes material piel algodón lana impermeable ligero ligera suscripción fidelidad puntos
    años niño niña diseño`,
  nl: `de het ik je een en is van voor mijn u niet te met op dat bestelling kan heeft hallo dank
    bedankt maat levering wat wanneer nog wordt product prijs beschikbaar retour hoe dagen schoenen
    schoen maar bestellingen besteld geleverd leveren leveringen ook ontvangen kleur terugbetaling
    jas voorraad artikel artikelen betaling sorry account kaart week verzending verzonden ruilen
    winkel gratis maten kleuren korting volgen ja jurk jurken jassen aangekomen aankomen garantie
    code factuur winkelwagen gekocht kopen aankoop aankopen terugbetaald pakket pakketten adres
    telefoon laptop laptops tas tassen verkeerd beschadigd kapot ontbreekt vervangen vervanging
    annuleren geannuleerd annulering klein kleine groot grote wijd smal duur uitverkoop aanbieding
    aanbiedingen cadeau cadeaus waardebon waardebonnen batterij batterijen oplader opladers
    aanbevelen aanbevolen vergelijken spijkerbroek overhemd overhemden laarzen sneakers bank lamp
    lampen fiets fietsen horloge horloges biologisch koffie wijn speelgoed materiaal leer katoen
    wol waterdicht licht abonnement klantenkaart punten ideeën financiële café één`,
};

/** Syllables of the generated stems (48 per language, some accented). */
const SYLLABLES: Record<string, string> = {
  en: `ba be bo da de do fa fe fi ga go ha ka ke ko la le lo ma me mo na ne no pa pe po ra re ro sa se
    so ta te to va ve wa we za bri cla dro fle gri plo stra tor`,
  fr: `ba bé bo da dé do fa fé fi ga go la lé lo ma mé mo na né no pa pé po ra ré ro sa sé so ta té
    to va vé vo cha che chon lon ton mar ber gri plo çon vè rè lu`,
  de: `ba be bo da de do fa fe fi ga go ha ka ke ko la le lo ma me mo na ne no pa pe po ra re ro sa se
    so ta te to wa we za ber ger lin stä mü bö kü hö ru`,
  it: `ba be bo da de do fa fe fi ga go la le lo ma me mo na ne no pa pe po ra re ro sa se so ta te
    to va ve vo za ze chi ghe gli sca sto tri ciò più ru lu ni`,
  es: `ba be bo da de do fa fe fi ga go la le lo ma me mo na ne no pa pe po ra re ro sa se so ta te
    to va ve vo za ce ci ña ño llo rra cá tí ru lu ni mú`,
  nl: `ba be bo da de do fa fe fi ga go ha ke ko la le lo ma me mo na ne no pa pe po ra re ro sa se
    so ta te to va ve wa we za oo ee ui ij ië ru lu ni`,
};

/** Inflected forms of a generated stem (first is the commonest): plurals and verb forms. */
const FORMS: Record<string, string[]> = {
  en: ['', 's', 'ed', 'ing'],
  fr: ['', 's', 'er', 'ée'],
  de: ['', 'en', 'ung', 'ungen'],
  it: ['o', 'i', 'are', 'ato'],
  es: ['o', 'os', 'ar', 'ado'],
  nl: ['', 'en', 'de', 'ing'],
};

/** Phrases the transcripts share, commonest first. */
const PHRASES: Record<string, string[]> = {
  en: [
    'order number',
    'free shipping',
    'in stock',
    '30-day return policy',
    'customer service',
    'track your order',
    'size guide',
    'out of stock',
    'gift card',
    'next day delivery',
  ],
  fr: [
    'numéro de commande',
    'livraison gratuite',
    'en stock',
    'politique de retour de 30 jours',
    'service client',
    'suivre votre commande',
    'guide des tailles',
    'en rupture de stock',
    'carte cadeau',
    'livraison express',
  ],
  de: [
    'Bestellnummer',
    'kostenloser Versand',
    'auf Lager',
    '30-tägiges Rückgaberecht',
    'Kundenservice',
    'Sendung verfolgen',
    'Größentabelle',
    'nicht vorrätig',
    'Geschenkkarte',
    'Lieferung am nächsten Tag',
  ],
  it: [
    "numero d'ordine",
    'spedizione gratuita',
    'disponibile in magazzino',
    'politica di reso di 30 giorni',
    'servizio clienti',
    'traccia il tuo ordine',
    'guida alle taglie',
    'esaurito',
    'carta regalo',
    'consegna il giorno dopo',
  ],
  es: [
    'número de pedido',
    'envío gratuito',
    'en stock',
    'política de devolución de 30 días',
    'atención al cliente',
    'seguir tu pedido',
    'guía de tallas',
    'agotado',
    'tarjeta regalo',
    'entrega al día siguiente',
  ],
  nl: [
    'bestelnummer',
    'gratis verzending',
    'op voorraad',
    '30 dagen retourbeleid',
    'klantenservice',
    'volg je bestelling',
    'maattabel',
    'uitverkocht',
    'cadeaukaart',
    'morgen in huis',
  ],
};

/** Product names are `<brand> <line> <model>`, the same in every language. */
export const BRANDS =
  `Veltra Korvo Nimbra Azuro Brisk Calder Dunmore Elvika Fjordel Galvani Hesper Isola Jarvik
  Kestrel Lumio Montaro Nordvik Orsella Pavona Quimby Rosvall Sablon Tessaro Umbria Valdora Wexley
  Yarrow Zephra Alvéo Brûlan Cöllner Dünmark Estrél Förde Grünwald Héloïse Ibérica Jönsson Kähler
  Lúmina Mårten Nuñez Olivé Piñata Quercia Rösler Sólvik Téllez Urbano Vitré`.split(/\s+/);
export const PRODUCT_LINES =
  `Air Pro Max Lite Trail Classic Urban Sport Flex Nova Eco Prime Core Edge Zen Aqua Terra
  Volt Comfort Studio`.split(/\s+/);
export const MODEL_PREFIXES = ['X', 'S', 'GT', 'RS', 'V', 'Q', 'Z', 'T'];
/** Products in the generated catalog (sku-1 … sku-N), drawn Zipf-like. */
export const CATALOG_SIZE = 50_000;
/** Ranks of the generated tail per language (stems × forms). */
export const TAIL_SIZE = 400_000;

export interface TranscriptVocabulary {
  /** Head words, `headStride` slots per language in the given order (unused slots repeat). */
  head: string[];
  headStride: number;
  /** Head words of each language. */
  headSizes: number[];
  syllables: string[];
  syllableCount: number;
  forms: string[];
  formCount: number;
  phrases: string[];
  /** Words in each phrase (whitespace-separated), same order as `phrases`. */
  phraseWords: number[];
  phraseCount: number;
}

function words(text: string): string[] {
  return text.trim().split(/\s+/);
}

/** Pads each language's list to `size` slots by repeating it, so slot = language × size + k. */
function slots(lists: string[][], size: number): string[] {
  return lists.flatMap((list) => Array.from({ length: size }, (_, k) => list[k % list.length]));
}

export function transcriptVocabulary(languages: readonly string[]): TranscriptVocabulary {
  const heads = languages.map((l) => [...new Set(words(HEAD[l]))]);
  const headStride = Math.max(...heads.map((h) => h.length));
  const syllables = languages.map((l) => words(SYLLABLES[l]));
  // 48 syllables make 48³ = 110,592 three-syllable stems, enough for the tail's 100,000.
  const syllableCount = 48;
  if (syllables.some((s) => s.length < syllableCount)) throw new Error('too few syllables');
  const phrases = slots(
    languages.map((l) => PHRASES[l]),
    Math.max(...languages.map((l) => PHRASES[l].length)),
  );
  return {
    head: slots(heads, headStride),
    headStride,
    headSizes: heads.map((h) => h.length),
    syllables: languages.flatMap((_, i) => syllables[i].slice(0, syllableCount)),
    syllableCount,
    forms: slots(
      languages.map((l) => FORMS[l]),
      4,
    ),
    formCount: 4,
    phrases,
    phraseWords: phrases.map((p) => words(p).length),
    phraseCount: phrases.length / languages.length,
  };
}
